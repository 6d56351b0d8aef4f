//! Which files are tests, which are documentation, which the repository asked us to ignore.
//!
//! Test files are recognised by the conventions of each ecosystem plus the globs a repository
//! configures; documentation is never a test file, whatever directory it sits in.

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::change::RepoPath;

/// Whether a file ends with a bundler's source-map comment (`//# sourceMappingURL=…`, or the
/// CSS `/*# sourceMappingURL=… */`): it was built, not written, and what it holds is its
/// build's (a committed release bundle under `dist/`). Only the last line is read: the comment
/// is written there, and a hand-written file that mentions it elsewhere is not built.
pub(crate) fn ends_with_source_map(raw: &[u8]) -> bool {
    let end = raw.trim_ascii_end();
    let last = end
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(end, |i| &end[i + 1..]);
    let last = last.trim_ascii_start();
    last.starts_with(b"//# sourceMappingURL=") || last.starts_with(b"/*# sourceMappingURL=")
}

/// Directory names that hold tests in every ecosystem we know (`src/test/` is covered by `test`).
const TEST_DIRS: &[&[u8]] = &[
    b"test",
    b"tests",
    b"spec",
    b"specs",
    b"__tests__",
    b"__test__",
    b"testing",
    // A suite kept inside the package it tests (`flask/testsuite/`, GCC's `gcc/testsuite/`).
    b"testsuite",
    b"testsuites",
    b"e2e",
    b"integration_tests",
    b"androidTest",
    b"testFixtures",
];

/// Directory names that hold documentation.
const DOC_DIRS: &[&[u8]] = &[b"doc", b"docs", b"documentation"];

/// Extensions of prose, never code and never a test.
const DOC_EXTS: &[&[u8]] = &[
    b"md",
    b"markdown",
    b"mdx",
    b"rst",
    b"txt",
    b"adoc",
    b"asciidoc",
    b"textile",
    b"org",
    b"rdoc",
    b"pod",
];

/// Tells test files, documentation and ignored files apart.
#[derive(Debug, Clone)]
pub struct Classifier {
    test_globs: GlobSet,
    ignore: GlobSet,
}

/// A glob from the configuration that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob '{glob}': {reason}")]
pub struct GlobError {
    pub glob: String,
    pub reason: String,
}

pub(crate) fn glob_set<'a>(globs: impl IntoIterator<Item = &'a str>) -> Result<GlobSet, GlobError> {
    let mut builder = GlobSetBuilder::new();
    for g in globs {
        builder.add(compile_glob(g)?);
    }
    builder.build().map_err(|e| GlobError {
        glob: String::new(),
        reason: e.to_string(),
    })
}

/// Compiles one configured glob. A glob without a `/` matches the file name at any depth, as in
/// `.gitignore`; `**` crosses directories, `*` does not.
pub fn compile_glob(glob: &str) -> Result<Glob, GlobError> {
    let pattern = if glob.contains('/') {
        glob.trim_start_matches('/').to_owned()
    } else {
        format!("**/{glob}")
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| GlobError {
            glob: glob.to_owned(),
            reason: e.kind().to_string(),
        })
}

/// Matches a byte path against a glob set.
pub(crate) fn glob_match(set: &GlobSet, path: &RepoPath) -> bool {
    if set.is_empty() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        set.is_match(std::ffi::OsStr::from_bytes(path.as_bytes()))
    }
    #[cfg(not(unix))]
    {
        set.is_match(path.display().as_ref())
    }
}

impl Classifier {
    pub fn new<'a>(
        test_globs: impl IntoIterator<Item = &'a str>,
        ignore: impl IntoIterator<Item = &'a str>,
    ) -> Result<Classifier, GlobError> {
        Ok(Classifier {
            test_globs: glob_set(test_globs)?,
            ignore: glob_set(ignore)?,
        })
    }

    /// True for files the repository asked the detector to leave alone.
    pub fn is_ignored(&self, path: &RepoPath) -> bool {
        glob_match(&self.ignore, path)
    }

    /// True for test code: by convention or by the configured globs, never documentation.
    pub fn is_test(&self, path: &RepoPath) -> bool {
        !is_doc(path) && (is_test_by_convention(path) || glob_match(&self.test_globs, path))
    }
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier {
            test_globs: GlobSet::empty(),
            ignore: GlobSet::empty(),
        }
    }
}

/// Documentation: prose by extension, or anything under a docs directory.
pub fn is_doc(path: &RepoPath) -> bool {
    let name = path.file_name();
    if let Some(ext) = extension(name)
        && DOC_EXTS.iter().any(|d| ext.eq_ignore_ascii_case(d))
    {
        return true;
    }
    path.dirs()
        .any(|d| DOC_DIRS.iter().any(|doc| d.eq_ignore_ascii_case(doc)))
}

fn extension(name: &[u8]) -> Option<&[u8]> {
    match name.iter().rposition(|&b| b == b'.') {
        Some(0) | None => None,
        Some(i) => Some(&name[i + 1..]),
    }
}

/// The test conventions of each ecosystem, by directory and by file name.
pub fn is_test_by_convention(path: &RepoPath) -> bool {
    if path.dirs().any(|d| TEST_DIRS.contains(&d)) {
        return true;
    }
    let name = path.file_name();
    let Some(dot) = name.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let (stem, ext) = (&name[..dot], &name[dot + 1..]);
    match ext {
        b"py" => stem.starts_with(b"test_") || stem.ends_with(b"_test") || stem == b"conftest",
        b"go" => stem.ends_with(b"_test"),
        b"rb" => stem.ends_with(b"_spec") || stem.ends_with(b"_test") || stem.starts_with(b"test_"),
        b"java" | b"kt" | b"kts" | b"groovy" | b"scala" => {
            stem.ends_with(b"Test")
                || stem.ends_with(b"Tests")
                || stem.ends_with(b"IT")
                || stem.ends_with(b"Spec")
                || stem.starts_with(b"Test")
        }
        b"cs" => stem.ends_with(b"Tests") || stem.ends_with(b"Test"),
        b"php" => stem.ends_with(b"Test"),
        b"swift" => stem.ends_with(b"Tests") || stem.ends_with(b"Test"),
        b"exs" => stem.ends_with(b"_test"),
        b"cc" | b"cpp" | b"cxx" | b"c" => {
            stem.ends_with(b"_test") || stem.ends_with(b"_unittest") || stem.ends_with(b"_tests")
        }
        b"rs" => false,
        _ => {
            // `x.test.ts`, `x.spec.js`, `x.test.jsx`, … : a `.test`/`.spec` infix before a JS
            // or TS extension.
            let js = matches!(
                ext,
                b"js" | b"mjs" | b"cjs" | b"jsx" | b"ts" | b"mts" | b"cts" | b"tsx"
            );
            js && (stem.ends_with(b".test") || stem.ends_with(b".spec"))
        }
    }
}

/// A file that runs or configures a test suite without holding tests itself: where a run can be
/// made to pass without touching a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// pytest's `conftest.py`.
    Conftest,
    /// A file the runner loads before the tests: Jest and Vitest setup files (`jest.setup.js`,
    /// `vitest.setup.ts`, `setupTests.ts`, global setup and teardown), a `setup.js` in a test
    /// directory, RSpec's `spec_helper.rb` and `rails_helper.rb`, Minitest's `test_helper.rb`,
    /// PHPUnit's `bootstrap.php` in a test directory.
    Setup,
    /// `jest.config.*`, `vitest.config.*`.
    RunnerConfig,
}

/// Directory names of files that tests read or run (fixtures, test data), which are not tests.
const FIXTURE_DIRS: &[&[u8]] = &[
    b"fixtures",
    b"fixture",
    b"__fixtures__",
    // PHPUnit's convention: the test classes its own end-to-end tests run, skipping on purpose.
    b"_files",
    b"testdata",
    b"test-data",
    b"test_data",
];

/// Under a directory of fixtures or test data: a script a test runs, a project a test builds.
/// Whether `path` is built or brought in rather than written: a bundle (`dist/`, `*.min.js`),
/// vendored or installed code. What it holds is some other file's, judged there.
pub fn is_generated(path: &RepoPath) -> bool {
    const DIRS: &[&[u8]] = &[b"dist", b"vendor", b"node_modules", b"third_party"];
    let bytes = path.as_bytes();
    let name = path.file_name();
    bytes
        .split(|&b| b == b'/')
        .rev()
        .skip(1)
        .any(|part| DIRS.contains(&part))
        || [
            b".min.js".as_slice(),
            b".min.mjs",
            b".min.cjs",
            b".bundle.js",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

pub fn is_fixture(path: &RepoPath) -> bool {
    path.dirs().any(|d| FIXTURE_DIRS.contains(&d))
}

/// A TypeScript type test, checked by `tsc`, `tsd`, `vitest --typecheck` or `dtslint`: there,
/// `// @ts-expect-error` asserts that a line does not compile.
pub fn is_type_test(path: &RepoPath) -> bool {
    const DIRS: &[&[u8]] = &[
        b"test-d",
        b"type-tests",
        b"types-tests",
        b"typetests",
        b"tsd",
        b"dtslint",
    ];
    let name = path.file_name();
    let infix = |w: &[u8]| name.windows(w.len()).any(|x| x == w);
    infix(b".test-d.") || infix(b".spec-d.") || path.dirs().any(|d| DIRS.contains(&d))
}

/// What part of a test run `path` is, if it sets one up or configures it.
pub fn harness(path: &RepoPath) -> Option<Harness> {
    let name = path.file_name();
    let dot = name.iter().position(|&b| b == b'.')?;
    let (stem, ext) = (&name[..dot], &name[dot + 1..]);
    let last_ext = ext.rsplit(|&b| b == b'.').next().unwrap_or(ext);
    let js = matches!(
        last_ext,
        b"js" | b"mjs" | b"cjs" | b"jsx" | b"ts" | b"mts" | b"cts" | b"tsx"
    );
    let in_test_dir = path.dirs().any(|d| TEST_DIRS.contains(&d));
    match name {
        b"conftest.py" => return Some(Harness::Conftest),
        b"spec_helper.rb" | b"rails_helper.rb" | b"test_helper.rb" => {
            return Some(Harness::Setup);
        }
        b"bootstrap.php" if in_test_dir => return Some(Harness::Setup),
        _ => {}
    }
    if !js {
        return None;
    }
    // `jest.config.ts`, `vitest.config.mts`: the stem is the runner, the first extension `config`.
    if matches!(stem, b"jest" | b"vitest") && ext.starts_with(b"config.") {
        return Some(Harness::RunnerConfig);
    }
    // Setup files by the names the runners' documentation and generators give them, with any
    // separator: `jest.setup.js`, `jest-setup.ts`, `setupTests.js`, `vitest.setup.ts`,
    // `global-setup.ts`, `setup.jest.js`, and `setup.js` in a test directory.
    let full: Vec<u8> = name[..name.len() - last_ext.len() - 1]
        .iter()
        .filter(|b| !matches!(b, b'.' | b'-' | b'_'))
        .map(u8::to_ascii_lowercase)
        .collect();
    const SETUP: &[&[u8]] = &[
        b"jestsetup",
        b"setupjest",
        b"vitestsetup",
        b"setupvitest",
        b"setuptests",
        b"setuptest",
        b"testsetup",
        b"testssetup",
        b"jestsetupafterenv",
        b"setupfilesafterenv",
        b"globalsetup",
        b"globalteardown",
        b"jestglobalsetup",
        b"jestglobalteardown",
        b"vitestglobalsetup",
    ];
    if SETUP.contains(&full.as_slice())
        || (in_test_dir && matches!(full.as_slice(), b"setup" | b"teardown"))
    {
        return Some(Harness::Setup);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(p: &str) -> bool {
        Classifier::default().is_test(&RepoPath::from(p))
    }

    #[test]
    fn conventions_per_language() {
        for p in [
            "tests/helpers.py",
            "pkg/test/foo.py",
            "test_api.py",
            "pkg/api_test.py",
            "conftest.py",
            "server/handler_test.go",
            "src/test/java/com/x/FooTest.java",
            "FooTests.java",
            "app/src/test/kotlin/BarTest.kt",
            "Project.Tests/CalcTests.cs",
            "spec/models/user_spec.rb",
            "web/__tests__/App.jsx",
            "web/App.test.tsx",
            "lib/a.spec.js",
            "base/strings_test.cc",
            "tests/FooTest.php",
            "Tests/AppTests.swift",
            "test/my_app_test.exs",
            "flask/testsuite/reqctx.py",
            "gcc/testsuite/gcc.dg/pr1.c",
        ] {
            assert!(test(p), "{p} should be a test file");
        }
    }

    #[test]
    fn not_tests() {
        for p in [
            "src/app.py",
            "testimony.py",
            "src/latest.py",
            "contest.py",
            "server/handler.go",
            "src/main/java/Foo.java",
            "web/App.tsx",
            "lib/spec_helper_generator.js",
            "src/lib.rs",
            "src/Framework/TestSuite.php",
            "pkg/testsuite.py",
        ] {
            assert!(!test(p), "{p} should not be a test file");
        }
    }

    #[test]
    fn documentation_is_never_a_test() {
        assert!(!test("tests/README.md"));
        assert!(!test("docs/tests/test_example.py"));
        assert!(!test("spec/notes.txt"));
        assert!(is_doc(&"docs/guide/example.py".into()));
    }

    #[test]
    fn configured_globs() {
        let c = Classifier::new(["qa/**", "*_check.py"], ["vendor/**"]).expect("valid globs");
        assert!(c.is_test(&"qa/smoke/run.py".into()));
        assert!(c.is_test(&"src/deep/db_check.py".into()));
        assert!(!c.is_test(&"src/qa/run.py".into()));
        assert!(c.is_ignored(&"vendor/lib/x.py".into()));
        assert!(!c.is_ignored(&"src/vendor.py".into()));
    }

    #[test]
    fn harness_files() {
        let h = |p: &str| harness(&RepoPath::from(p));
        assert_eq!(h("tests/conftest.py"), Some(Harness::Conftest));
        assert_eq!(h("conftest.py"), Some(Harness::Conftest));
        for p in [
            "jest.setup.js",
            "jest-setup.ts",
            "web/src/setupTests.ts",
            "vitest.setup.mts",
            "config/global-setup.ts",
            "setup.jest.js",
            "test/setup.js",
            "spec/spec_helper.rb",
            "spec/rails_helper.rb",
            "test/test_helper.rb",
            "tests/bootstrap.php",
        ] {
            assert_eq!(h(p), Some(Harness::Setup), "{p}");
        }
        assert_eq!(h("jest.config.js"), Some(Harness::RunnerConfig));
        assert_eq!(
            h("packages/a/vitest.config.mts"),
            Some(Harness::RunnerConfig)
        );
        for p in [
            "src/setup.js",
            "setup.py",
            "src/bootstrap.php",
            "src/conftest_utils.py",
            "jest.config.json",
            "lib/test_setup.rb",
            "src/setupTests.md",
        ] {
            assert_eq!(h(p), None, "{p}");
        }
    }

    #[test]
    fn type_tests() {
        assert!(is_type_test(&"test/typescript/expect.test-d.ts".into()));
        assert!(is_type_test(&"types/tsd/index.ts".into()));
        assert!(!is_type_test(&"src/expect.test.ts".into()));
    }

    #[test]
    fn fixtures() {
        assert!(is_fixture(&"test/fixtures/exit-zero.js".into()));
        assert!(is_fixture(&"pkg/testdata/main_test.go".into()));
        assert!(is_fixture(
            &"tests/end-to-end/retry/_files/SkippedAttemptTest.php".into()
        ));
        assert!(!is_fixture(&"tests/test_fixtures.py".into()));
    }

    #[test]
    fn bad_glob_is_an_error() {
        let err = Classifier::new(["a/[b"], []).expect_err("unclosed class");
        assert!(err.to_string().contains("a/[b"), "{err}");
    }
}
