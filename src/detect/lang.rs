//! Which programming language a file is written in, told by its name alone.

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

#[cfg(test)]
mod tests {
    use super::*;

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
