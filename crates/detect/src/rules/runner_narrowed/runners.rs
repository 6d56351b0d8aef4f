//! The test runners the rule knows: how a command invokes one (through `poetry run`, `npx`,
//! `python -m`, `nyc`, …), which ecosystem it belongs to, and which of its options select fewer
//! tests or fail less.

/// One shell word and the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Word {
    pub text: String,
    pub line: Option<u32>,
}

/// The test runners the rule knows, with their ecosystems (a runner replaced by another of the
/// same ecosystem is a migration, not a narrowing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Runner {
    Pytest,
    Unittest,
    Tox,
    Jest,
    Vitest,
    Mocha,
    JsOther,
    GoTest,
    Cargo,
    Maven,
    Gradle,
    Dotnet,
    Rspec,
    RubyOther,
    Phpunit,
    Ctest,
    Bazel,
    Other,
    /// `npm test`, `make test`, `just test`: another script or target, named.
    Delegate,
}

impl Runner {
    pub(super) fn ecosystem(self) -> &'static str {
        match self {
            Runner::Pytest | Runner::Unittest | Runner::Tox => "python",
            Runner::Jest | Runner::Vitest | Runner::Mocha | Runner::JsOther => "js",
            Runner::GoTest => "go",
            Runner::Cargo => "rust",
            Runner::Maven | Runner::Gradle => "jvm",
            Runner::Dotnet => "dotnet",
            Runner::Rspec | Runner::RubyOther => "ruby",
            Runner::Phpunit => "php",
            Runner::Ctest => "c",
            Runner::Bazel => "bazel",
            Runner::Other => "other",
            Runner::Delegate => "delegate",
        }
    }
}

/// Wrappers that run the command after them.
pub(super) const WRAPPERS: &[&str] = &[
    "sudo",
    "time",
    "exec",
    "nice",
    "nohup",
    "xvfb-run",
    "npx",
    "pnpx",
    "bunx",
    "dotenv",
    "cross-env",
    "env",
    "command",
    "stdbuf",
    "xargs",
];
/// Two-word wrappers: `poetry run`, `bundle exec`, …
pub(super) const WRAPPERS2: &[(&str, &str)] = &[
    ("poetry", "run"),
    ("uv", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("rye", "run"),
    ("bundle", "exec"),
    ("npm", "exec"),
    ("pnpm", "exec"),
    ("yarn", "exec"),
    ("conda", "run"),
];

/// Options of those wrappers that take a value (`uv run --with x`).
pub(super) const WRAPPER_VALUED: &[&str] = &[
    "--with",
    "--python",
    "-p",
    "--extra",
    "--group",
    "--directory",
    "--project",
    "--env-file",
    "--package",
    "--only-group",
    "-e",
    "--environment",
    "--gemfile",
    "--with-requirements",
];

pub(super) fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// The runner a command invokes, and where its own arguments start.
pub(super) fn runner(words: &[Word]) -> Option<(Runner, String, usize)> {
    let w = |i: usize| words.get(i).map(|w| w.text.as_str()).unwrap_or("");
    let mut i = 0;
    loop {
        let word = w(i);
        if word.is_empty() {
            return None;
        }
        // `FOO=bar cmd`.
        if word.contains('=')
            && !word.starts_with('-')
            && word.split('=').next().is_some_and(|n| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        {
            i += 1;
            continue;
        }
        if WRAPPERS.contains(&basename(word)) {
            i += 1;
            // `env -u X cmd`, `xargs -0 -n 1 cmd`: skip options of the wrapper.
            while w(i).starts_with('-') {
                let valued = matches!(
                    (basename(word), w(i)),
                    (
                        "xargs",
                        "-n" | "-I" | "-L" | "-P" | "-d" | "-s" | "-a" | "-E"
                    ) | ("env", "-u" | "-C" | "-S")
                );
                i += if valued { 2 } else { 1 };
            }
            if word == "dotenv" && w(i) == "--" {
                i += 1;
            }
            continue;
        }
        if word == "timeout" {
            i += 2;
            continue;
        }
        if let Some(&(_, second)) = WRAPPERS2.iter().find(|(a, _)| *a == basename(word))
            && w(i + 1) == second
        {
            i += 2;
            // `uv run --locked --with x pytest`.
            while w(i).starts_with('-') {
                let valued = WRAPPER_VALUED.contains(&w(i)) && !w(i).contains('=');
                i += if valued { 2 } else { 1 };
            }
            continue;
        }
        break;
    }
    let word = basename(w(i));
    // `python -m pytest`, `coverage run -m pytest`, `python3 -X dev -m unittest`.
    let module = if word.starts_with("python") || word == "py" || word == "coverage" {
        let mut k = i + 1;
        if word == "coverage" {
            if w(k) != "run" {
                return None;
            }
            k += 1;
        }
        while k < words.len() && w(k) != "-m" {
            if !w(k).starts_with('-') {
                return None;
            }
            k += 1;
        }
        if w(k) != "-m" {
            return None;
        }
        Some((w(k + 1), k + 2))
    } else {
        None
    };
    if let Some((m, start)) = module {
        return match m {
            "pytest" | "py.test" => Some((Runner::Pytest, "pytest".into(), start)),
            "unittest" => Some((Runner::Unittest, "unittest".into(), start)),
            "tox" => Some((Runner::Tox, "tox".into(), start)),
            "nox" => Some((Runner::Tox, "nox".into(), start)),
            _ => None,
        };
    }
    let sub = w(i + 1);
    let found = match word {
        "pytest" | "py.test" => (Runner::Pytest, "pytest".to_owned(), i + 1),
        "tox" | "nox" => (Runner::Tox, word.to_owned(), i + 1),
        "jest" => (Runner::Jest, "jest".to_owned(), i + 1),
        "vitest" => {
            let skip = usize::from(matches!(sub, "run" | "watch"));
            (Runner::Vitest, "vitest".to_owned(), i + 1 + skip)
        }
        "mocha" | "_mocha" => (Runner::Mocha, "mocha".to_owned(), i + 1),
        "ava" | "tap" | "jasmine" | "karma" | "nyc" | "c8" | "jest-ci" => {
            if matches!(word, "nyc" | "c8") {
                // `nyc mocha`: the runner after the coverage wrapper.
                let rest = &words[i + 1..];
                return (0..rest.len())
                    .filter(|&k| !rest[k].text.starts_with('-'))
                    .find_map(|k| runner(&rest[k..]).map(|(r, n, s)| (r, n, s + i + 1 + k)));
            }
            (Runner::JsOther, word.to_owned(), i + 1)
        }
        "playwright" | "cypress" if matches!(sub, "test" | "run") => {
            (Runner::JsOther, format!("{word} {sub}"), i + 2)
        }
        "node" | "deno" | "bun" if sub == "--test" || sub == "test" => {
            (Runner::JsOther, format!("{word} {sub}"), i + 2)
        }
        "go" if sub == "test" => (Runner::GoTest, "go test".to_owned(), i + 2),
        "gotestsum" => (Runner::GoTest, "gotestsum".to_owned(), i + 1),
        "cargo" if matches!(sub, "test" | "t") => (Runner::Cargo, "cargo test".to_owned(), i + 2),
        "cargo" if sub == "nextest" && w(i + 2) == "run" => {
            (Runner::Cargo, "cargo nextest run".to_owned(), i + 3)
        }
        "mvn" | "mvnw" | "mvnd" => (Runner::Maven, "mvn".to_owned(), i + 1),
        "gradle" | "gradlew" => (Runner::Gradle, "gradle".to_owned(), i + 1),
        "dotnet" if sub == "test" => (Runner::Dotnet, "dotnet test".to_owned(), i + 2),
        "rspec" => (Runner::Rspec, "rspec".to_owned(), i + 1),
        "rake" | "rails" if matches!(sub, "test" | "spec") => {
            (Runner::RubyOther, format!("{word} {sub}"), i + 2)
        }
        "phpunit" | "pest" => (Runner::Phpunit, word.to_owned(), i + 1),
        "ctest" => (Runner::Ctest, "ctest".to_owned(), i + 1),
        "bazel" | "bazelisk" if sub == "test" => (Runner::Bazel, "bazel test".to_owned(), i + 2),
        "swift" | "mix" | "flutter" | "dart" | "zig" | "stack" | "cabal" | "sbt" | "lein"
            if sub == "test" =>
        {
            (Runner::Other, format!("{word} {sub}"), i + 2)
        }
        "npm" | "pnpm" | "yarn" | "bun" => {
            // `pnpm -r --filter x test`, `npm run --silent test:unit`.
            let skip_options = |mut k: usize| {
                while w(k).starts_with('-') {
                    let valued = matches!(
                        w(k),
                        "--filter"
                            | "-F"
                            | "-C"
                            | "--dir"
                            | "--prefix"
                            | "--workspace"
                            | "-w"
                            | "--cwd"
                    );
                    k += if valued { 2 } else { 1 };
                }
                k
            };
            let at = skip_options(i + 1);
            let sub = w(at);
            let (script, start) = match sub {
                "test" | "t" | "tst" => ("test".to_owned(), at + 1),
                "run" | "run-script" => {
                    let k = skip_options(at + 1);
                    if !is_test_name(w(k)) {
                        return None;
                    }
                    (w(k).to_owned(), k + 1)
                }
                s if matches!(word, "yarn" | "pnpm") && is_test_name(s) => (s.to_owned(), at + 1),
                "jest" | "vitest" | "mocha" => {
                    return runner(&words[at..]).map(|(r, n, s)| (r, n, s + at));
                }
                _ => return None,
            };
            let name = if script == "test" {
                format!("{word} test")
            } else {
                format!("{word} run {script}")
            };
            (Runner::Delegate, name, start)
        }
        "make" | "gmake" | "just" | "task" => {
            let mut k = i + 1;
            while w(k).starts_with('-') {
                k += 1;
            }
            let target = w(k);
            if !is_test_name(target) {
                return None;
            }
            (Runner::Delegate, format!("{word} {target}"), k + 1)
        }
        _ => return None,
    };
    Some(found)
}

/// A script, target or job name that runs tests: `test`, `tests`, `test:unit`, `unit-test`,
/// `check`, `spec`, `coverage`, `ci`.
pub(super) fn is_test_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.split(|c: char| !c.is_ascii_alphanumeric()).any(|part| {
        matches!(
            part,
            "spec"
                | "specs"
                | "check"
                | "ci"
                | "coverage"
                | "cov"
                | "jest"
                | "vitest"
                | "e2e"
                | "integration"
        ) || ((part.starts_with("test") || part.ends_with("test") || part.ends_with("tests"))
            && !matches!(
                part,
                "latest" | "contest" | "attest" | "protest" | "fastest"
            ))
    })
}

/// Options that select fewer tests, per runner: `(name, takes a value, what it does)`.
pub(super) type OptionTable = &'static [(&'static str, bool, &'static str)];

pub(super) const DESELECTS: &str = "deselects tests";
pub(super) const SELECTS: &str = "runs only the tests it selects";
pub(super) const IGNORES: &str = "ignores test files";
pub(super) const SKIPS_ALL: &str = "runs no test at all";
pub(super) const LOOSER: &str = "no longer fails on what it used to";

pub(super) const PYTEST: OptionTable = &[
    ("-k", true, SELECTS),
    (
        "-m",
        true,
        "runs only the tests its marker expression selects",
    ),
    ("--deselect", true, DESELECTS),
    ("--ignore", true, IGNORES),
    ("--ignore-glob", true, IGNORES),
    ("-p", true, "disables a plugin"),
    ("--co", false, SKIPS_ALL),
    ("--collect-only", false, SKIPS_ALL),
    ("--continue-on-collection-errors", false, LOOSER),
    ("--lf", false, SELECTS),
    ("--last-failed", false, SELECTS),
    ("--sw", false, SELECTS),
    ("--stepwise", false, SELECTS),
];
pub(super) const UNITTEST: OptionTable = &[("-k", true, SELECTS)];
pub(super) const JS: OptionTable = &[
    ("-t", true, SELECTS),
    ("--testNamePattern", true, SELECTS),
    ("--testPathIgnorePatterns", true, IGNORES),
    ("--testPathPattern", true, SELECTS),
    ("--testPathPatterns", true, SELECTS),
    ("--passWithNoTests", false, "passes when it finds no test"),
    ("--bail", false, "stops at the first failing test file"),
    ("-o", false, SELECTS),
    ("--onlyChanged", false, SELECTS),
    ("--changedSince", true, SELECTS),
    ("--lastCommit", false, SELECTS),
    ("--onlyFailures", false, SELECTS),
    ("--findRelatedTests", false, SELECTS),
    ("--exclude", true, IGNORES),
    ("--changed", false, SELECTS),
    ("-g", true, SELECTS),
    ("--grep", true, SELECTS),
    ("--fgrep", true, SELECTS),
    ("-i", false, SELECTS),
    ("--invert", false, SELECTS),
    ("--forbid-only", false, ""),
];
pub(super) const GO: OptionTable = &[
    ("-run", true, SELECTS),
    ("-skip", true, DESELECTS),
    ("-list", true, SKIPS_ALL),
    ("-run=", true, SELECTS),
];
pub(super) const CARGO: OptionTable = &[
    ("--skip", true, DESELECTS),
    ("--ignored", false, "runs only the ignored tests"),
    ("--no-run", false, SKIPS_ALL),
    ("--lib", false, SELECTS),
    ("--bins", false, SELECTS),
    ("--bin", true, SELECTS),
    ("--test", true, SELECTS),
    ("--doc", false, SELECTS),
    ("--exclude", true, DESELECTS),
    ("--exact", false, SELECTS),
    ("-E", true, SELECTS),
    ("--filter-expr", true, SELECTS),
    ("--no-fail-fast", false, ""),
];
pub(super) const MAVEN: OptionTable = &[
    ("-DskipTests", false, SKIPS_ALL),
    ("-Dmaven.test.skip", false, SKIPS_ALL),
    ("-DskipITs", false, DESELECTS),
    ("-Dtest", true, SELECTS),
    ("-Dit.test", true, SELECTS),
    ("-Dmaven.test.failure.ignore", false, LOOSER),
    ("-Dsurefire.failIfNoSpecifiedTests", false, LOOSER),
    ("-DfailIfNoTests", false, LOOSER),
    ("--fail-never", false, LOOSER),
    ("-fn", false, LOOSER),
    ("-Dgroups", true, SELECTS),
    ("-DexcludedGroups", true, DESELECTS),
];
pub(super) const GRADLE: OptionTable = &[
    ("-x", true, "excludes a task"),
    ("--exclude-task", true, "excludes a task"),
    ("--tests", true, SELECTS),
    ("--continue", false, ""),
];
pub(super) const DOTNET: OptionTable = &[("--filter", true, SELECTS)];
pub(super) const RSPEC: OptionTable = &[
    ("--tag", true, SELECTS),
    ("-t", true, SELECTS),
    ("-e", true, SELECTS),
    ("--example", true, SELECTS),
    ("--exclude-pattern", true, IGNORES),
    ("--dry-run", false, SKIPS_ALL),
    ("--only-failures", false, SELECTS),
    ("--next-failure", false, SELECTS),
];
pub(super) const PHPUNIT: OptionTable = &[
    ("--filter", true, SELECTS),
    ("--exclude-group", true, DESELECTS),
    ("--group", true, SELECTS),
    ("--testsuite", true, SELECTS),
    ("--exclude-testsuite", true, DESELECTS),
];
pub(super) const CTEST: OptionTable = &[
    ("-E", true, DESELECTS),
    ("--exclude-regex", true, DESELECTS),
    ("-R", true, SELECTS),
    ("--tests-regex", true, SELECTS),
    ("-L", true, SELECTS),
    ("-LE", true, DESELECTS),
    ("--label-exclude", true, DESELECTS),
];
pub(super) const BAZEL: OptionTable = &[
    ("--test_filter", true, SELECTS),
    ("--test_tag_filters", true, SELECTS),
];

pub(super) fn table(r: Runner) -> OptionTable {
    match r {
        Runner::Pytest => PYTEST,
        Runner::Unittest => UNITTEST,
        Runner::Jest | Runner::Vitest | Runner::Mocha | Runner::JsOther | Runner::Delegate => JS,
        Runner::GoTest => GO,
        Runner::Cargo => CARGO,
        Runner::Maven => MAVEN,
        Runner::Gradle => GRADLE,
        Runner::Dotnet => DOTNET,
        Runner::Rspec => RSPEC,
        Runner::Phpunit => PHPUNIT,
        Runner::Ctest => CTEST,
        Runner::Bazel => BAZEL,
        Runner::Tox | Runner::RubyOther | Runner::Other => &[],
    }
}

/// Options every runner of a family takes a value for, besides the narrowing ones: so that the
/// value is not read as a path.
pub(super) const VALUED: &[&str] = &[
    "-c",
    "-n",
    "--numprocesses",
    "--maxfail",
    "--tb",
    "-W",
    "-o",
    "--rootdir",
    "--confcutdir",
    "--basetemp",
    "-m",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--junitxml",
    "--durations",
    "--timeout",
    "-r",
    "--log-level",
    "--import-mode",
    "--reporter",
    "--reporters",
    "--config",
    "-c",
    "--maxWorkers",
    "-w",
    "--coverageReporters",
    "--outputFile",
    "--project",
    "--dir",
    "--root",
    "--environment",
    "--shard",
    "--timeout",
    "-p",
    "-tags",
    "-timeout",
    "-count",
    "-parallel",
    "-coverprofile",
    "-covermode",
    "-coverpkg",
    "-json",
    "--features",
    "-F",
    "--package",
    "--target",
    "--manifest-path",
    "-j",
    "--jobs",
    "--format",
    "--logger",
    "--configuration",
    "--framework",
    "--require",
    "--out",
    "-o",
    "--profile",
];

/// A CI job or step whose name says it tests: not a build, a release or a compatibility
/// check (which may well skip tests with `-DskipTests`).
pub(super) fn is_test_job(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.split(|c: char| !c.is_ascii_alphanumeric()).any(|part| {
        matches!(
            part,
            "spec" | "specs" | "e2e" | "integration" | "unit" | "coverage"
        ) || ((part.starts_with("test") || part.ends_with("test") || part.ends_with("tests"))
            && !matches!(
                part,
                "latest" | "contest" | "attest" | "protest" | "fastest"
            ))
    })
}
