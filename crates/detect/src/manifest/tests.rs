//! Each manifest format, broken manifests, and import names.

use super::*;

fn names(path: &str, content: &str) -> Vec<String> {
    parse(&RepoPath::from(path), content.as_bytes())
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect()
}

/// Sorted: TOML tables and JSON objects need not keep the file's key order.
fn sorted_names(path: &str, content: &str) -> Vec<String> {
    let mut v = names(path, content);
    v.sort();
    v
}

fn py(name: &str) -> Vec<String> {
    import_names(&Dependency {
        name: name.to_owned(),
        ecosystem: Ecosystem::Python,
        manifest: RepoPath::from("requirements.txt"),
    })
}

fn node(name: &str) -> Vec<String> {
    import_names(&Dependency {
        name: name.to_owned(),
        ecosystem: Ecosystem::Node,
        manifest: RepoPath::from("package.json"),
    })
}

#[test]
fn requirements_file() {
    let text = "\
# Runtime dependencies
-r base.txt
-c constraints.txt
--index-url https://pypi.example.com/simple
--extra-index-url=https://mirror.example.com/simple
--find-links ./wheels

requests==2.31.0  # pinned for the proxy bug
PyYAML>=6.0
Django >= 4.2, < 5.0 ; python_version >= \"3.10\"
uvicorn[standard]~=0.23
typing-extensions!=4.6.0; python_version < \"3.8\"
legacy-pkg (>=1.0)
exact===1.0
zope.interface<6
numpy \\
    >=1.24 \\
    --hash=sha256:0123456789abcdef
pandas==2.0.3 --hash=sha256:abc --hash=sha256:def
-e git+https://github.com/org/mylib.git@main#egg=mylib
--editable git+https://github.com/org/other.git#egg=other-lib[extra]&subdirectory=py
-e ./libs/local
-e .
./libs/foo
.
../sibling
sqlglot @ https://github.com/tobymao/sqlglot/archive/main.zip
https://files.example.com/whl/attrs-23.1.0-py3-none-any.whl
https://example.com/dist/my-sdist-pkg-1.2.3.tar.gz
git+https://github.com/org/noegg.git
git+ssh://git@github.com/org/repo.git#egg=repo-pkg
    indented-pkg==1
not a requirement line
C:\\wheels\\thing.exe
${ENV_VAR}
";
    assert_eq!(
        names("requirements.txt", text),
        vec![
            "requests",
            "PyYAML",
            "Django",
            "uvicorn",
            "typing-extensions",
            "legacy-pkg",
            "exact",
            "zope.interface",
            "numpy",
            "pandas",
            "mylib",
            "other-lib",
            "sqlglot",
            "attrs",
            "my-sdist-pkg",
            "repo-pkg",
            "indented-pkg",
        ]
    );
}

#[test]
fn requirements_comment_line_ends_continuation_and_crlf() {
    let text = "flask \\\r\n  >=2\r\n# note \\\r\nclick\r\n";
    assert_eq!(names("requirements-dev.txt", text), vec!["flask", "click"]);
}

#[test]
fn requirements_never_fail_and_dedupe() {
    let bytes = b"\xEF\xBB\xBFrequests\n\xff\xfe garbage\nrequests>=2\n";
    let deps = parse(&RepoPath::from("requirements/base.txt"), bytes).unwrap();
    assert_eq!(deps.len(), 1);
    assert_eq!(deps[0].name, "requests");
    assert_eq!(deps[0].ecosystem, Ecosystem::Python);
    assert_eq!(deps[0].manifest, RepoPath::from("requirements/base.txt"));
    assert!(names("requirements.txt", "").is_empty());
}

#[test]
fn pyproject_pep621_and_groups() {
    let text = r#"
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "demo"
dependencies = [
    "httpx[http2]>=0.24",
    "PyYAML",
    'tomli>=1.1.0; python_version < "3.11"',
    "sqlglot @ git+https://github.com/tobymao/sqlglot.git",
]

[project.optional-dependencies]
docs = ["sphinx>=7", "furo"]
ml = ["scikit-learn==1.3.*"]

[dependency-groups]
test = ["pytest>=8", "pytest-cov"]
dev = [{ include-group = "test" }, "ruff"]

[tool.uv]
dev-dependencies = ["mypy"]

[tool.pdm.dev-dependencies]
lint = ["black", "-e file:///${PROJECT_ROOT}/libs/x#egg=xlib"]
"#;
    assert_eq!(
        sorted_names("sub/pkg/pyproject.toml", text),
        vec![
            "PyYAML",
            "black",
            "furo",
            "httpx",
            "mypy",
            "pytest",
            "pytest-cov",
            "ruff",
            "scikit-learn",
            "sphinx",
            "sqlglot",
            "tomli",
            "xlib",
        ]
    );
}

#[test]
fn pyproject_poetry() {
    let text = r#"
[tool.poetry]
name = "demo"

[tool.poetry.dependencies]
python = "^3.10"
requests = "^2.31"
beautifulsoup4 = { version = "^4.12", optional = true }
"ruamel.yaml" = "*"

[tool.poetry.dev-dependencies]
pytest = "^7"

[tool.poetry.group.lint.dependencies]
flake8 = "*"

[tool.poetry.group.docs]
optional = true

[tool.poetry.group.docs.dependencies]
mkdocs = "*"
"#;
    assert_eq!(
        sorted_names("pyproject.toml", text),
        vec![
            "beautifulsoup4",
            "flake8",
            "mkdocs",
            "pytest",
            "requests",
            "ruamel.yaml"
        ]
    );
}

#[test]
fn pyproject_without_dependencies() {
    assert!(names("pyproject.toml", "[tool.black]\nline-length = 100\n").is_empty());
    assert!(names("pyproject.toml", "").is_empty());
    // Wrong types are passed over, not errors.
    assert!(names("pyproject.toml", "[project]\ndependencies = \"requests\"\n").is_empty());
}

#[test]
fn broken_toml_is_a_one_line_error() {
    let text = "[project]\nname = \"x\"\ndependencies = [\"a\",\n[oops\n";
    let err = parse(&RepoPath::from("sub/pyproject.toml"), text.as_bytes()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("sub/pyproject.toml: TOML parse error at line "),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");

    let err = parse(&RepoPath::from("Pipfile"), b"[packages\nrequests = \"*\"\n").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("Pipfile: TOML parse error at line 1, column "),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");

    let err = parse(&RepoPath::from("pyproject.toml"), b"a = \"\xff\"").unwrap_err();
    assert_eq!(err.path, RepoPath::from("pyproject.toml"));
    assert!(err.reason.contains("UTF-8"), "{}", err.reason);
}

#[test]
fn setup_cfg() {
    let text = "\
[metadata]
name = demo
install_requires = not-this

[options]
packages = find:
python_requires = >=3.8
install_requires =
    requests>=2
    # a comment line
    PyYAML; python_version >= \"3.8\"
    importlib-metadata ; python_version < \"3.10\"

    click
tests_require = pytest
zip_safe = False

[options.extras_require]
docs =
    sphinx
    furo
ssl = pyOpenSSL>=23
all: beautifulsoup4[lxml]

[options.entry_points]
console_scripts =
    demo = demo.cli:main
";
    assert_eq!(
        names("setup.cfg", text),
        vec![
            "requests",
            "PyYAML",
            "importlib-metadata",
            "click",
            "pytest",
            "sphinx",
            "furo",
            "pyOpenSSL",
            "beautifulsoup4"
        ]
    );
}

#[test]
fn setup_cfg_single_line_and_file_directive() {
    let text = "[options]\ninstall_requires = requests; six>=1.0; python_version < \"3\"\n\
                    [options.extras_require]\ndev = file: requirements-dev.in\n";
    assert_eq!(names("setup.cfg", text), vec!["requests", "six"]);
    assert!(names("setup.cfg", "no sections = here\n[[[\n").is_empty());
}

#[test]
fn pipfile() {
    let text = r#"
[[source]]
url = "https://pypi.example.com/simple"
verify_ssl = true
name = "pypi"

[packages]
requests = "*"
"Django" = ">=4.2"
mylib = { editable = true, path = "./libs/mylib" }

[dev-packages]
pytest = "*"

[requires]
python_version = "3.11"
"#;
    assert_eq!(
        sorted_names("services/api/Pipfile", text),
        vec!["Django", "mylib", "pytest", "requests"]
    );
}

#[test]
fn package_json() {
    let text = r#"{
  "name": "web",
  "version": "1.0.0",
  "scripts": { "test": "jest" },
  "dependencies": { "lodash": "^4.17.21", "@scope/ui": "1.0.0", "my-lodash": "npm:lodash@^4" },
  "devDependencies": { "@types/node": "^20", "jest": "^29" },
  "peerDependencies": { "react": ">=18" },
  "optionalDependencies": { "fsevents": "^2" },
  "bundledDependencies": ["not-this"]
}"#;
    let deps = parse(
        &RepoPath::from("packages/web/package.json"),
        text.as_bytes(),
    )
    .unwrap();
    assert!(deps.iter().all(|d| d.ecosystem == Ecosystem::Node));
    let mut got: Vec<_> = deps.into_iter().map(|d| d.name).collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            "@scope/ui",
            "@types/node",
            "fsevents",
            "jest",
            "lodash",
            "my-lodash",
            "react",
        ]
    );
}

#[test]
fn broken_json_is_a_one_line_error() {
    let err = parse(
        &RepoPath::from("web/package.json"),
        b"{\n  \"dependencies\": {,}\n}",
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("web/package.json: JSON parse error at line 2, column "),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    assert!(!msg.contains(" at line 2 column "), "{msg}");

    let err = parse(&RepoPath::from("package.json"), b"").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("package.json: JSON parse error")
    );
    let err = parse(&RepoPath::from("package.json"), b"[1, 2]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "package.json: expected a JSON object at the top level"
    );
    // A byte-order mark is not an error.
    assert_eq!(
        names("package.json", "\u{feff}{\"dependencies\":{\"a\":\"1\"}}"),
        vec!["a"]
    );
}

#[test]
fn not_a_manifest_is_an_error() {
    let err = parse(&RepoPath::from("setup.py"), b"setup()").unwrap_err();
    assert!(err.to_string().starts_with("setup.py: "));
}

#[test]
fn manifest_names() {
    for yes in [
        "requirements.txt",
        "requirements-dev.txt",
        "requirements_test.txt",
        "dev-requirements.txt",
        "Requirements.TXT",
        "requirements/base.txt",
        "backend/requirements/prod.txt",
        "sub/pkg/pyproject.toml",
        "pyproject.toml",
        "package.json",
        "apps/web/package.json",
        "Pipfile",
        "setup.cfg",
    ] {
        assert!(is_manifest(&RepoPath::from(yes)), "{yes}");
    }
    for no in [
        "README.txt",
        "package-lock.json",
        "Pipfile.lock",
        "setup.py",
        "requirements.in",
        "requirements",
        "requirements/README.md",
        "docs/notes.txt",
        "node_modules/lodash/package.json",
        "web/node_modules/x/requirements.txt",
        "pyproject.toml.bak",
        "tsconfig.json",
    ] {
        assert!(!is_manifest(&RepoPath::from(no)), "{no}");
    }
    // Not UTF-8 is still a path.
    assert!(is_manifest(&RepoPath::new(
        b"\xff/requirements.txt".to_vec()
    )));
}

#[test]
fn normalization() {
    assert_eq!(normalize("PyYAML"), "pyyaml");
    assert_eq!(normalize("ruamel.yaml"), "ruamel_yaml");
    assert_eq!(normalize("typing-extensions"), "typing_extensions");
    assert_eq!(normalize("PIL"), "pil");
    assert_eq!(normalize("Flask_SQLAlchemy"), "flask_sqlalchemy");
    assert_eq!(normalize("lodash.debounce"), "lodash_debounce");
}

#[test]
fn import_names_table() {
    let cases: &[(&str, &[&str])] = &[
        ("PyYAML", &["pyyaml", "yaml"]),
        ("beautifulsoup4", &["beautifulsoup4", "bs4"]),
        ("scikit-learn", &["scikit_learn", "sklearn"]),
        ("scikit-image", &["scikit_image", "skimage"]),
        ("Pillow", &["pillow", "pil"]),
        ("python-dateutil", &["python_dateutil", "dateutil"]),
        ("opencv-python", &["opencv_python", "cv2"]),
        (
            "opencv-python-headless",
            &["opencv_python_headless", "cv2", "opencv_python"],
        ),
        ("opencv-contrib-python", &["opencv_contrib_python", "cv2"]),
        ("pyzmq", &["pyzmq", "zmq"]),
        ("attrs", &["attrs", "attr"]),
        ("pycryptodome", &["pycryptodome", "crypto"]),
        ("pycryptodomex", &["pycryptodomex", "cryptodome"]),
        ("PyJWT", &["pyjwt", "jwt"]),
        ("python-dotenv", &["python_dotenv", "dotenv"]),
        ("mysqlclient", &["mysqlclient", "mysqldb"]),
        ("psycopg2-binary", &["psycopg2_binary", "psycopg2"]),
        ("psycopg-binary", &["psycopg_binary", "psycopg"]),
        ("python-magic", &["python_magic", "magic"]),
        ("python-jose", &["python_jose", "jose"]),
        ("python-multipart", &["python_multipart", "multipart"]),
        ("pyOpenSSL", &["pyopenssl", "openssl"]),
        ("setuptools", &["setuptools", "pkg_resources"]),
        ("ruamel.yaml", &["ruamel_yaml", "ruamel"]),
        ("dnspython", &["dnspython", "dns"]),
        ("pyserial", &["pyserial", "serial"]),
        ("PyGithub", &["pygithub", "github"]),
        ("faiss-cpu", &["faiss_cpu", "faiss"]),
        ("faiss-gpu", &["faiss_gpu", "faiss"]),
        ("tensorflow-gpu", &["tensorflow_gpu", "tensorflow"]),
        ("tensorflow-cpu", &["tensorflow_cpu", "tensorflow"]),
        ("discord.py", &["discord_py", "discord"]),
        ("protobuf", &["protobuf", "google"]),
        ("google-cloud-storage", &["google_cloud_storage", "google"]),
        ("msgpack-python", &["msgpack_python", "msgpack"]),
        ("python-Levenshtein", &["python_levenshtein", "levenshtein"]),
        ("typing-extensions", &["typing_extensions"]),
        ("PyMuPDF", &["pymupdf", "fitz"]),
        ("python-docx", &["python_docx", "docx"]),
        ("python-pptx", &["python_pptx", "pptx"]),
        ("Markdown", &["markdown"]),
        ("Jinja2", &["jinja2"]),
        ("SQLAlchemy", &["sqlalchemy"]),
    ];
    for (dist, want) in cases {
        let got = py(dist);
        assert_eq!(got.len(), want.len(), "{dist}: {got:?}");
        for w in *want {
            assert!(got.iter().any(|g| g == w), "{dist}: {got:?} lacks {w}");
        }
        assert_eq!(
            got[0],
            normalize(dist),
            "{dist}: the distribution name comes first"
        );
    }
    let win = py("pywin32");
    for m in ["pywin32", "win32api", "win32con", "pythoncom"] {
        assert!(win.iter().any(|g| g == m), "{win:?} lacks {m}");
    }
}

#[test]
fn import_names_general_rules() {
    assert_eq!(py("python-slugify"), vec!["python_slugify", "slugify"]);
    assert_eq!(py("foo-binary"), vec!["foo_binary", "foo"]);
    assert_eq!(py("bar-headless"), vec!["bar_headless", "bar"]);
    assert_eq!(py("zope.interface"), vec!["zope_interface", "zope"]);
    assert_eq!(
        py("azure-storage-blob"),
        vec!["azure_storage_blob", "azure"]
    );
    assert_eq!(py("requests"), vec!["requests"]);
    // Nothing odd from degenerate names.
    assert_eq!(py("python"), vec!["python"]);
    assert_eq!(py("python-"), vec!["python_"]);
    assert_eq!(py("binary"), vec!["binary"]);
}

#[test]
fn import_names_node() {
    assert_eq!(node("lodash"), vec!["lodash"]);
    assert_eq!(node("lodash.debounce"), vec!["lodash_debounce"]);
    assert_eq!(node("Left-Pad"), vec!["left_pad"]);
    assert!(node("@types/node").is_empty());
    assert!(node("@scope/x").is_empty());
    // No Python rules for Node packages.
    assert_eq!(node("python-shell"), vec!["python_shell"]);
}
