//! Which programming language a file is written in, told by its name alone.

use std::sync::OnceLock;

use super::change::RepoPath;

/// The languages the detector reads. Each has its own comment and string syntax (see
/// [`super::lexer`]) and its own ways to skip a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    /// JavaScript and TypeScript, with JSX/TSX.
    JavaScript,
    Go,
    Rust,
    /// Java and Kotlin.
    Java,
    CSharp,
    Ruby,
    Php,
    /// C and C++.
    Cpp,
    Swift,
    Elixir,
}

impl Language {
    /// Every language, in the order of the enum.
    pub const ALL: [Language; 11] = [
        Language::Python,
        Language::JavaScript,
        Language::Go,
        Language::Rust,
        Language::Java,
        Language::CSharp,
        Language::Ruby,
        Language::Php,
        Language::Cpp,
        Language::Swift,
        Language::Elixir,
    ];

    /// The language of a file, from its extension (or `None` for anything that is not code).
    pub fn of(path: &RepoPath) -> Option<Language> {
        let name = path.file_name();
        let ext = match name.iter().rposition(|&b| b == b'.') {
            Some(0) | None => return None,
            Some(i) => &name[i + 1..],
        };
        let lang = match ext {
            b"py" | b"pyi" | b"pyw" => Language::Python,
            b"js" | b"mjs" | b"cjs" | b"jsx" | b"ts" | b"mts" | b"cts" | b"tsx" => {
                Language::JavaScript
            }
            b"go" => Language::Go,
            b"rs" => Language::Rust,
            b"java" | b"kt" | b"kts" | b"groovy" | b"scala" => Language::Java,
            b"cs" => Language::CSharp,
            b"rb" | b"rake" => Language::Ruby,
            b"php" => Language::Php,
            b"c" | b"cc" | b"cpp" | b"cxx" | b"c++" | b"h" | b"hh" | b"hpp" | b"hxx" => {
                Language::Cpp
            }
            b"swift" => Language::Swift,
            b"ex" | b"exs" => Language::Elixir,
            _ => return None,
        };
        Some(lang)
    }
}

/// A value built for one language on first use, such as a rule's compiled patterns: a change
/// without Go files never compiles the Go patterns. Each language's value is built once, by
/// whichever thread asks first.
pub(crate) struct PerLanguage<T> {
    cells: [OnceLock<T>; Language::ALL.len()],
    build: fn(Language) -> T,
}

impl<T> PerLanguage<T> {
    pub const fn new(build: fn(Language) -> T) -> PerLanguage<T> {
        PerLanguage {
            cells: [const { OnceLock::new() }; Language::ALL.len()],
            build,
        }
    }

    pub fn get(&self, lang: Language) -> &T {
        // `ALL` is in the enum's order (tested), so a language's discriminant is its index.
        self.cells[lang as usize].get_or_init(|| (self.build)(lang))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_the_enums_order() {
        for (i, l) in Language::ALL.iter().enumerate() {
            assert_eq!(*l as usize, i, "{l:?}");
        }
        let table = PerLanguage::new(|l| format!("{l:?}"));
        assert_eq!(table.get(Language::Go), "Go");
        assert_eq!(table.get(Language::Elixir), "Elixir");
    }

    #[test]
    fn by_extension() {
        let of = |p: &str| Language::of(&RepoPath::from(p));
        assert_eq!(of("a/b/test_x.py"), Some(Language::Python));
        assert_eq!(of("web/App.test.tsx"), Some(Language::JavaScript));
        assert_eq!(of("FooTest.kt"), Some(Language::Java));
        assert_eq!(of("x_test.exs"), Some(Language::Elixir));
        assert_eq!(of("README.md"), None);
        assert_eq!(of(".py"), None);
        assert_eq!(of("Makefile"), None);
    }
}
