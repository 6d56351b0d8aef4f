use super::*;
use crate::lexer::Lexed;

/// The guards of the whole text, as (values, shown).
fn read(lang: Language, text: &str) -> Vec<(Vec<String>, String)> {
    let lexed = Lexed::new(lang, text.as_bytes(), true);
    let src = Source::of(&lexed);
    guards(&src, 0..text.len())
        .into_iter()
        .map(|g| (g.values, g.shown))
        .collect()
}

#[test]
fn guards_that_pass_over_a_row() {
    let got = read(
        Language::Go,
        "for _, tt := range tests {\n\tif tt.name == \"punctuation\" {\n\t\tcontinue // later\n\t}\n\tt.Run(tt.name, nil)\n}\n",
    );
    assert_eq!(
        got,
        [(
            vec!["\"punctuation\"".to_owned()],
            "if tt.name == \"punctuation\" { continue }".to_owned()
        )]
    );
    let got = read(
        Language::JavaScript,
        "test.each(rows)('%s', (name, want) => {\n  if (name === 'a' || 'b' == name) return;\n  expect(f(name)).toBe(want);\n});\n",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, ["\"a\"", "\"b\""]);
    let got = read(
        Language::Java,
        "void parses(String input) {\n  if (input.equals(\"x\")) {\n    return;\n  }\n  assertEquals(1, parse(input));\n}\n",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, ["\"x\""]);
    let got = read(
        Language::Python,
        "def test_sku(sku, want):\n    if sku == 'TS-M-RED':\n        return\n    if sku in ('A', 2): continue\n    assert parse(sku) == want\n",
    );
    assert_eq!(
        got.iter().map(|g| g.0.clone()).collect::<Vec<_>>(),
        [
            vec!["\"TS-M-RED\"".to_owned()],
            vec!["\"A\"".to_owned(), "2".to_owned()]
        ]
    );
}

#[test]
fn not_a_guard() {
    for (lang, text) in [
        // A condition of the platform as well: the row runs elsewhere.
        (
            Language::Go,
            "if tt.name == \"x\" && runtime.GOOS == \"windows\" {\n\tcontinue\n}\n",
        ),
        (
            Language::Go,
            "if runtime.GOOS == \"windows\" {\n\tcontinue\n}\n",
        ),
        // Not an equality, or no literal.
        (Language::Go, "if tt.name != \"x\" {\n\tcontinue\n}\n"),
        (Language::Go, "if tt.skip {\n\tcontinue\n}\n"),
        (Language::Go, "if got == want {\n\tcontinue\n}\n"),
        // The block does more than leave.
        (
            Language::Go,
            "if tt.name == \"x\" {\n\tcheck(t)\n\tcontinue\n}\n",
        ),
        (
            Language::JavaScript,
            "if (name === 'a') return expect(f(name)).toBe(1);\n",
        ),
        (
            Language::Python,
            "if sys.platform == 'win32':\n    return\n",
        ),
        (
            Language::Python,
            "if sku not in ('A', 'B'):\n    continue\n",
        ),
        (Language::Python, "if sku == 'A':\n    assert f(sku)\n"),
        // In a string or a comment.
        (Language::Python, "x = 'if sku == \"A\": continue'\n"),
        (Language::Go, "// if tt.name == \"x\" { continue }\n"),
    ] {
        assert_eq!(read(lang, text), [], "{text}");
    }
}

#[test]
fn a_field_holds_a_value_alone_or_named() {
    assert!(holds("\"a\"", "\"a\""));
    assert!(holds("name: \"a\"", "\"a\""));
    assert!(holds("name=\"a\"", "\"a\""));
    assert!(!holds("\"ab\"", "\"a\""));
    assert!(!holds("x==\"a\"", "\"a\""));
}
