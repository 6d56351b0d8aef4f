//! The lexer on every language: comments and strings masked, code kept, any input survived.

use super::*;
use Language::*;

const ALL: [Language; 11] = [
    Python, JavaScript, Go, Rust, Java, CSharp, Ruby, Php, Cpp, Swift, Elixir,
];

/// The invariants every mask keeps: same length, newlines where they were, and every byte
/// either kept or blanked.
fn check_shape(src: &[u8], out: &[u8]) {
    assert_eq!(src.len(), out.len(), "length changed");
    for (k, (&a, &b)) in src.iter().zip(out).enumerate() {
        assert_eq!(a == b'\n', b == b'\n', "newline moved at byte {k}");
        assert!(a == b || b == b' ', "byte {k} is neither kept nor blanked");
    }
}

fn m(lang: Language, s: &str) -> String {
    let out = mask(lang, s.as_bytes());
    check_shape(s.as_bytes(), &out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `needle` survives masking (is code).
fn kept(lang: Language, s: &str, needle: &str) -> bool {
    m(lang, s).contains(needle)
}

#[test]
fn python() {
    assert_eq!(m(Python, "x = 'a#b'  # skip\n"), "x = '   '        \n");
    assert_eq!(
        m(Python, "f(r\"\\\\\", b'\\'') # c"),
        "f(r\"  \", b'  ')    "
    );
    let src = "def t():\n    \"\"\"@pytest.mark.skip\n    here\"\"\"\n@pytest.mark.skip\n";
    let out = m(Python, src);
    assert_eq!(out.matches("@pytest.mark.skip").count(), 1);
    assert!(out.contains("\n@pytest.mark.skip\n"));
    assert_eq!(m(Python, "'''a\nb'''x"), "''' \n '''x");
    // A newline ends a non-triple string; the next line is code.
    assert_eq!(m(Python, "s = 'open\nskip()"), "s = '    \nskip()");
    // A backslash-newline continues it.
    assert_eq!(m(Python, "s = 'a\\\nb' + c"), "s = '  \n ' + c");
    assert_eq!(
        m(Python, "rb'x' Rf\"y\" f'''z'''"),
        "rb' ' Rf\" \" f''' '''"
    );
}

#[test]
fn javascript() {
    assert_eq!(
        m(JavaScript, "const u = 'http://x'; // it.skip(\n"),
        "const u = '        ';            \n"
    );
    let src = "const s = `\n  it.skip('a', ${x})\n`;\nit.skip('b', () => {});\n";
    let out = m(JavaScript, src);
    assert_eq!(out.matches("it.skip(").count(), 1);
    assert!(out.contains("\nit.skip('"));
    assert_eq!(
        m(JavaScript, "/* it.only( */ x / y"),
        "               x / y"
    );
    assert_eq!(m(JavaScript, "a = \"\\\"//\"; b"), "a = \"    \"; b");
    assert!(kept(
        JavaScript,
        "#priv = 1; describe.skip()",
        "describe.skip()"
    ));
}

#[test]
fn javascript_regex_literals() {
    // Contents masked like a string's; the slashes and flags are code.
    assert_eq!(
        m(JavaScript, "expect(c).toMatch(/catch\\s*\\(/)\n"),
        "expect(c).toMatch(/          /)\n"
    );
    assert_eq!(m(JavaScript, "x = /\"a{/gi;"), "x = /   /gi;");
    // A `/` in a class or escaped does not close it; `//` inside is not a comment.
    assert_eq!(m(JavaScript, "f(/[/]/, 1)"), "f(/   /, 1)");
    assert_eq!(
        m(JavaScript, "s.replace(/^assets\\//, '')"),
        "s.replace(/         /, '')"
    );
    assert_eq!(m(JavaScript, "a = /x\\//; b()"), "a = /   /; b()");
    // After each token that takes an expression.
    for src in [
        "return /it.skip(/",
        "x => /it.skip(/",
        "a && /it.skip(/",
        "[/it.skip(/]",
        "c ? /it.skip(/ : 0",
        "typeof /it.skip(/",
        "/it.skip(/.test(s)",
    ] {
        assert!(!kept(JavaScript, src, "it.skip("), "{src}");
    }
    // Division: after a name, a number, a call, an index, a literal.
    for src in [
        "a = b / c; it.skip(x) / 2",
        "n = 10 / 2 / it.skip(1)",
        "f(x) / g(y) + it.skip(z) / 3",
        "xs[0] / 2; it.skip(t) / 4",
        "'a'.length / 2; it.skip() / 1",
        "total /= 2; it.skip() / 1",
    ] {
        assert!(kept(JavaScript, src, "it.skip("), "{src}");
    }
    // Comments stay comments, and what follows them is read by the last code token.
    assert_eq!(
        m(JavaScript, "x = a; // c /d/\n/r(/"),
        "x = a;         \n/  /"
    );
    assert_eq!(m(JavaScript, "x = a // c\n/ b(/"), "x = a     \n/ b(/");
    assert_eq!(m(JavaScript, "x = a /* c */ / b(/"), "x = a         / b(/");
    // A template literal is a string: its `/` are not read, and after it `/` divides.
    assert_eq!(
        m(JavaScript, "`${a}/${b}` / it.skip(/"),
        "`         ` / it.skip(/"
    );
    // JSX tags are not regex literals.
    assert!(kept(
        JavaScript,
        "<p>a</p> <i>b</i>; it.skip(1)",
        "it.skip("
    ));
    // An unterminated one was division: the damage stays on its line.
    assert_eq!(m(JavaScript, "x = ( / 2;\n/a(/"), "x = ( / 2;\n/  /");
    // Other languages: no regex literals.
    assert_eq!(m(Go, "x := (/ 1 /)"), "x := (/ 1 /)");
}

#[test]
fn go() {
    assert_eq!(
        m(Go, "t.Skip(\"why\") // t.Skip\n"),
        "t.Skip(\"   \")          \n"
    );
    assert_eq!(m(Go, "s := `a\\`; r := 'x'"), "s := `  `; r := ' '");
    assert_eq!(
        m(Go, "x := `\nt.Skip()\n`\nt.Skip()"),
        "x := `\n        \n`\nt.Skip()"
    );
    assert_eq!(m(Go, "/* a\n b */ c"), "    \n      c");
}

#[test]
fn rust() {
    assert_eq!(
        m(Rust, "fn f<'a>(x: &'a str) -> char { 'x' }"),
        "fn f<'a>(x: &'a str) -> char { ' ' }"
    );
    assert_eq!(
        m(Rust, "'outer: loop { break 'outer; }"),
        "'outer: loop { break 'outer; }"
    );
    assert_eq!(
        m(Rust, "let c = '\\''; #[ignore]"),
        "let c = '  '; #[ignore]"
    );
    assert_eq!(m(Rust, "('\"', 'é', b'q')"), "(' ', '  ', b' ')");
    assert_eq!(
        m(Rust, "/* /* */ still comment */ code"),
        "                          code"
    );
    assert_eq!(
        m(Rust, "/// #[ignore]\n//! x\n#[ignore]"),
        "             \n     \n#[ignore]"
    );
    assert_eq!(
        m(Rust, "r#\"a \"b \"# + r\"\\\" + br##\"x\"#\"## c"),
        "r#\"     \"# + r\" \" + br##\"   \"## c"
    );
    assert_eq!(m(Rust, "\"a\n#[ignore]\" x"), "\" \n         \" x");
    assert_eq!(m(Rust, "r#type + b\"\\\"\""), "r#type + b\"  \"");
}

#[test]
fn java() {
    assert_eq!(
        m(Java, "@Disabled(\"flaky\") // @Disabled\n"),
        "@Disabled(\"     \")             \n"
    );
    let src = "String s = \"\"\"\n  @Disabled\n  \"\"\";\n@Disabled\nchar c = '\"';";
    let out = m(Java, src);
    assert_eq!(out.matches("@Disabled").count(), 1);
    assert!(out.ends_with("\n@Disabled\nchar c = ' ';"));
    // Not nested: the tail of a would-be nested comment is code.
    assert_eq!(m(Java, "/* /* */ @Ignore"), "         @Ignore");
    assert_eq!(m(Java, "def s = '''a\n'''; x"), "def s = ''' \n'''; x");
}

#[test]
fn csharp() {
    assert_eq!(
        m(CSharp, "var p = @\"a\\\"; [Ignore]"),
        "var p = @\"  \"; [Ignore]"
    );
    assert_eq!(m(CSharp, "@\"a\"\"b\" x"), "@\"    \" x");
    assert_eq!(
        m(CSharp, "$@\"{a}\n\" + @$\"q\" y"),
        "$@\"   \n\" + @$\" \" y"
    );
    assert_eq!(m(CSharp, "$\"a{b}\\\"\" z"), "$\"      \" z");
    assert_eq!(
        m(
            CSharp,
            "var r = \"\"\"\"\n  \"\"\" [Ignore]\n  \"\"\"\"; [Ignore]"
        ),
        "var r = \"\"\"\"\n              \n  \"\"\"\"; [Ignore]"
    );
    assert_eq!(m(CSharp, "\"\"\"a \"\" b\"\"\" c"), "\"\"\"      \"\"\" c");
    assert_eq!(
        m(CSharp, "\"\" + '\\'' // [Ignore]"),
        "\"\" + '  '            "
    );
    assert!(kept(CSharp, "#if DEBUG\n[Ignore]\n#endif", "[Ignore]"));
    assert!(kept(CSharp, "var @class = 1; [Ignore]", "[Ignore]"));
}

#[test]
fn ruby() {
    assert_eq!(m(Ruby, "skip 'why' # skip\n"), "skip '   '       \n");
    assert_eq!(
        m(Ruby, "=begin\nskip\n=end\nskip \"a#{b}\""),
        "      \n    \n    \nskip \"     \""
    );
    assert_eq!(m(Ruby, "x = ?' ; y = ?a; skip"), "x = ?  ; y = ? ; skip");
    assert_eq!(m(Ruby, "c ?'a':'b' # z"), "c ?' ':' '    ");
    assert_eq!(m(Ruby, "%w(don't skip) + x % 2"), "%w(          ) + x % 2");
    assert_eq!(m(Ruby, "%q(a(b)c) skip"), "%q(     ) skip");
    assert_eq!(m(Ruby, "p $'; skip"), "p $'; skip");
    let src = "s = <<~EOS.strip\n  skip don't\n  EOS\nskip\n";
    assert_eq!(
        m(Ruby, src),
        "s = <<~EOS.strip\n            \n  EOS\nskip\n"
    );
    assert_eq!(m(Ruby, "a << b; skip"), "a << b; skip");
    assert_eq!(m(Ruby, "a <<\"b\"\nskip"), "a <<\" \"\nskip");
    assert_eq!(
        m(Ruby, "f(<<-'X', 1)\nskip\nX\nskip"),
        "f(<<-'X', 1)\n    \nX\nskip"
    );
    assert!(kept(Ruby, "def valid?(x) = skip", "skip"));
}

#[test]
fn php() {
    assert_eq!(
        m(Php, "#[Attr]\n# comment\n// c\n$x = '#[no]';"),
        "#[Attr]\n         \n    \n$x = '     ';"
    );
    assert_eq!(
        m(Php, "/* @group skip */ $this->markTestSkipped(\"a\");"),
        "                  $this->markTestSkipped(\" \");"
    );
    let src = "$s = <<<'EOT'\n markTestSkipped\n EOT;\n$this->markTestSkipped();";
    assert_eq!(
        m(Php, src),
        "$s = <<<'EOT'\n                \n EOT;\n$this->markTestSkipped();"
    );
    assert_eq!(m(Php, "$a = \"x\ny\"; z"), "$a = \" \n \"; z");
}

#[test]
fn cpp() {
    assert_eq!(
        m(Cpp, "GTEST_SKIP() << \"why\"; // GTEST_SKIP()"),
        "GTEST_SKIP() << \"   \";                "
    );
    assert_eq!(
        m(Cpp, "int n = 1'000'000; char c = 'x';"),
        "int n = 1'000'000; char c = ' ';"
    );
    assert_eq!(m(Cpp, "0xFF'FF + u8'a'"), "0xFF'FF + u8' '");
    assert_eq!(
        m(Cpp, "R\"x(a)\"\n)\" b)x\" c R\"(d)\""),
        "R\"x(   \n    )x\" c R\"( )\""
    );
    // C block comments do not nest.
    assert_eq!(m(Cpp, "/* /* */ DISABLED_x"), "         DISABLED_x");
    assert!(kept(Cpp, "#include \"a.h\"\n#define X 1", "#define X 1"));
}

#[test]
fn swift() {
    assert_eq!(
        m(Swift, "throw XCTSkip(\"why\") // XCTSkip\n"),
        "throw XCTSkip(\"   \")           \n"
    );
    assert_eq!(m(Swift, "/* /* */ XCTSkip */ x"), "                    x");
    assert_eq!(
        m(Swift, "#\"a\"b\"# #if os(Linux)"),
        "#\"   \"# #if os(Linux)"
    );
    assert_eq!(
        m(Swift, "let s = \"\"\"\nXCTSkip\n\"\"\"\nXCTSkip()"),
        "let s = \"\"\"\n       \n\"\"\"\nXCTSkip()"
    );
    assert_eq!(m(Swift, "let c = 'x' // no"), "let c = 'x'      ");
}

#[test]
fn elixir() {
    assert_eq!(m(Elixir, "@tag :skip # skip\n"), "@tag :skip       \n");
    assert_eq!(
        m(
            Elixir,
            "@moduledoc \"\"\"\n@tag :skip\n\"\"\"\n@tag skip: true"
        ),
        "@moduledoc \"\"\"\n          \n\"\"\"\n@tag skip: true"
    );
    assert_eq!(
        m(Elixir, "~r/\"#/ ++ ~s(a) ++ [?\", ?#] # c"),
        "~r/  / ++ ~s( ) ++ [? , ? ]    "
    );
    assert_eq!(m(Elixir, "'a#{b}' :\"q\" x"), "'     ' :\" \" x");
    assert!(kept(
        Elixir,
        "def empty?(x), do: x # y",
        "def empty?(x), do: x"
    ));
}

#[test]
fn unterminated_constructs_mask_to_the_end() {
    assert_eq!(m(Rust, "a /* b\nc"), "a     \n ");
    assert_eq!(m(Python, "a '''b\nc"), "a ''' \n ");
    assert_eq!(m(JavaScript, "a `b\nc"), "a ` \n ");
    assert_eq!(m(Ruby, "a\n=begin\nb"), "a\n      \n ");
    assert_eq!(m(CSharp, "a @\"b\nc"), "a @\" \n ");
    assert_eq!(m(Cpp, "R\"d(x)e\""), "R\"d(    ");
    assert_eq!(m(Php, "<<<EOT\nx"), "<<<EOT\n ");
    assert_eq!(m(Rust, "'\\"), "' ");
    assert_eq!(m(Rust, "'"), "'");
}

/// Every prefix of a sample full of tricky constructs, and pseudo-random bytes (not UTF-8),
/// through every language: no panic, and the shape is kept.
#[test]
fn never_panics_on_truncated_or_random_input() {
    let sample: &[u8] = b"a'b'c\"d\\\"e\"`f`/*g/*h*/i*/j//k\n#l\n'''m'''\"\"\"n\"\"\"\
            r##\"o\"#\"## br\"p\" c\"q\" @\"r\"\"s\" $@\"t\" \"\"\"\"u\"\"\"\" '\\u{1F600}' '\xc3\xa9'\n\
            =begin\nv\n=end\n%q(w(x)) ?a ?\\n $' <<~EOS\ny\nEOS\n<<<'Z'\nz\nZ;\n#[A]\n\
            R\"d(aa)d\" u8R\"(b)\" 1'000 ~r/c/ ~S\"\"\"d\"\"\" #\"e\"# 'x \xff\xfe\x80\r\n\\";
    for lang in ALL {
        for end in 0..=sample.len() {
            let src = &sample[..end];
            check_shape(src, &mask(lang, src));
            check_shape(src, &mask_strings(lang, src));
        }
    }
    let alphabet: &[u8] = b"\"'`#/*\\\n@$?~%<R rbc(){}[]=-_!EOS\r\xc3\xa9\xff0";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut src = Vec::with_capacity(4096);
    for _ in 0..200 {
        src.clear();
        for _ in 0..(state % 300) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let pick = (state >> 32) as usize;
            src.push(if pick.is_multiple_of(4) {
                (pick >> 8) as u8
            } else {
                alphabet[(pick >> 8) % alphabet.len()]
            });
        }
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        for lang in ALL {
            check_shape(&src, &mask(lang, &src));
        }
    }
}

/// Inputs built to make a naive closing-delimiter search quadratic still run in a blink.
#[test]
fn stays_linear_on_adversarial_input() {
    let mut src = b"r".to_vec();
    src.extend(std::iter::repeat_n(b'#', 200));
    src.push(b'"');
    for _ in 0..2000 {
        src.push(b'"');
        src.extend(std::iter::repeat_n(b'#', 199));
    }
    src.extend(std::iter::repeat_n(b'"', 3000));
    src.extend(b"/*".repeat(3000));
    src.extend(b"\"\"\"".repeat(1000));
    for lang in ALL {
        let out = mask(lang, &src);
        check_shape(&src, &out);
    }
    let out = mask(Rust, &src);
    assert!(out[202..].iter().all(|&b| b == b' '));
}

/// The two halves of [`mask`]: what one keeps, the other blanks, and together they are `mask`.
#[test]
fn strings_only_and_comments_only() {
    let cases: &[(Language, &str)] = &[
        (
            Python,
            "x = '# noqa'  # noqa: E501\n\"\"\"# type: ignore\"\"\"\n",
        ),
        (
            JavaScript,
            "const s = '// @ts-ignore'; // @ts-ignore\n/* a */ `b`\n",
        ),
        (
            Rust,
            "let s = \"#[allow(x)]\"; // c\n/* /* d */ */ r#\"e\"#\n",
        ),
        (
            Ruby,
            "s = '# x' # rubocop:disable Foo\n=begin\nc\n=end\n<<~EOS\nh\nEOS\n",
        ),
        (
            Php,
            "<?php $a = '# x'; # phpcs:ignore\n// @phpstan-ignore-line\n",
        ),
        (
            CSharp,
            "var s = @\"// x\"; // y\n#pragma warning disable CS1\n",
        ),
    ];
    for &(lang, src) in cases {
        let both = mask(lang, src.as_bytes());
        let strings = mask_strings(lang, src.as_bytes());
        let comments = mask_comments(lang, src.as_bytes());
        check_shape(src.as_bytes(), &strings);
        check_shape(src.as_bytes(), &comments);
        for k in 0..src.len() {
            let blank = |v: &[u8]| v[k] == b' ';
            assert_eq!(
                blank(&both),
                blank(&strings) || blank(&comments),
                "{lang:?} byte {k} of {src:?}"
            );
        }
    }
    let s =
        |lang, src: &str| String::from_utf8_lossy(&mask_strings(lang, src.as_bytes())).into_owned();
    assert_eq!(
        s(Python, "x = '# noqa'  # noqa: E501\n"),
        "x = '      '  # noqa: E501\n"
    );
    assert_eq!(
        s(Python, "\"\"\"# type: ignore\"\"\"  # type: ignore\n"),
        "\"\"\"              \"\"\"  # type: ignore\n"
    );
    assert_eq!(
        s(JavaScript, "f('// x') /* eslint-disable */\n"),
        "f('    ') /* eslint-disable */\n"
    );
    assert_eq!(s(Ruby, "=begin\nc\n=end\n"), "=begin\nc\n=end\n");
}

#[test]
fn one_pass_gives_both_masks() {
    for (lang, src) in [
        (
            Language::Python,
            &b"x = 'a # b'  # c\ny = \"\"\"doc\n\"\"\"\n"[..],
        ),
        (Language::JavaScript, b"f(`a ${b} c`, /* d */ 'e') // f\n"),
        (Language::Ruby, b"x = <<~EOS\n  body\nEOS\n# c\n"),
        (Language::Rust, b"let s = r#\"x\"#; // c\nlet c = 'y';\n"),
    ] {
        let (masked, code) = mask_and_mask_comments(lang, src);
        assert_eq!(masked, mask(lang, src));
        assert_eq!(code, mask_comments(lang, src));
    }
}

#[test]
fn a_lexed_version_gives_the_same_views_in_any_order() {
    let src = &b"x = 'a # b'  # c\nassert f(\"s\") == 2  # was 3\n"[..];
    for code_too in [false, true] {
        let masked_first = Lexed::new(Python, src, code_too);
        assert_eq!(masked_first.masked(), mask(Python, src));
        assert_eq!(masked_first.code(), mask_comments(Python, src));
        let code_first = Lexed::new(Python, src, code_too);
        assert_eq!(code_first.code(), mask_comments(Python, src));
        assert_eq!(code_first.masked(), mask(Python, src));
        assert_eq!(code_first.raw(), src);
    }
}
