//! Dependency manifests: which packages a project declares, and the names they are imported by.
//!
//! This module owns parsing dependency manifests (pip requirements files, `pyproject.toml`,
//! `setup.cfg`, `Pipfile`, `package.json`) into the dependency names they declare, and telling
//! the top-level module names each dependency can be imported as (`PyYAML` is imported as `yaml`).
//! The `shadow-module` rule uses it to notice a new local file or package that would hide a real
//! dependency. It does no IO: it is handed the path and contents of one file at a time.

use super::change::RepoPath;

/// The package ecosystem a dependency belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ecosystem {
    Python,
    Node,
}

/// One dependency declared in a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependency {
    /// The distribution name as written in the manifest (e.g. "PyYAML", "@types/node", "lodash").
    pub name: String,
    pub ecosystem: Ecosystem,
    /// The manifest it was declared in.
    pub manifest: RepoPath,
}

/// A one-line reason a manifest could not be read, e.g.
/// "pyproject.toml: TOML parse error at line 3, column 7: ...".
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ManifestError {
    pub path: RepoPath,
    pub reason: String,
}

/// The manifest formats this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A pip requirements file.
    Requirements,
    PyProject,
    SetupCfg,
    Pipfile,
    PackageJson,
}

impl Kind {
    fn of(path: &RepoPath) -> Option<Kind> {
        // A vendored package's manifest declares that package's dependencies, not the project's.
        if path.dirs().any(|d| d == b"node_modules".as_slice()) {
            return None;
        }
        let name = path.file_name();
        match name {
            b"pyproject.toml" => return Some(Kind::PyProject),
            b"setup.cfg" => return Some(Kind::SetupCfg),
            b"Pipfile" => return Some(Kind::Pipfile),
            b"package.json" => return Some(Kind::PackageJson),
            _ => {}
        }
        let lower = name.to_ascii_lowercase();
        if lower.len() > 4 && lower.ends_with(b".txt") {
            let in_requirements_dir = path.dirs().any(|d| d.eq_ignore_ascii_case(b"requirements"));
            let named_requirements = lower.windows(12).any(|w| w == b"requirements");
            if in_requirements_dir || named_requirements {
                return Some(Kind::Requirements);
            }
        }
        None
    }
}

/// True when the file at `path` is a manifest this module reads: `pyproject.toml`, `setup.cfg`,
/// `Pipfile`, `package.json`, any `*.txt` whose name contains "requirements"
/// (`requirements.txt`, `requirements-dev.txt`, `dev-requirements.txt`) and any `*.txt` inside a
/// directory named `requirements/`. Anything under a `node_modules/` directory is not.
pub fn is_manifest(path: &RepoPath) -> bool {
    Kind::of(path).is_some()
}

/// Parses one manifest. Never panics; a file that does not parse is an Err (the caller skips it
/// with a warning). A requirements file or `setup.cfg` never fails: lines that cannot be read are
/// skipped.
pub fn parse(path: &RepoPath, content: &[u8]) -> Result<Vec<Dependency>, ManifestError> {
    let fail = |reason: String| ManifestError {
        path: path.clone(),
        reason,
    };
    let Some(kind) = Kind::of(path) else {
        return Err(fail(
            "not a dependency manifest this module reads".to_owned(),
        ));
    };
    let content = content.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(content);
    let (names, ecosystem) = match kind {
        Kind::Requirements => (
            requirements_names(&String::from_utf8_lossy(content)),
            Ecosystem::Python,
        ),
        Kind::SetupCfg => (
            setup_cfg_names(&String::from_utf8_lossy(content)),
            Ecosystem::Python,
        ),
        Kind::PyProject => (
            pyproject_names(&parse_toml(content).map_err(fail)?),
            Ecosystem::Python,
        ),
        Kind::Pipfile => (
            pipfile_names(&parse_toml(content).map_err(fail)?),
            Ecosystem::Python,
        ),
        Kind::PackageJson => (package_json_names(content).map_err(fail)?, Ecosystem::Node),
    };
    let mut deps: Vec<Dependency> = Vec::with_capacity(names.len());
    for name in names {
        if !deps.iter().any(|d| d.name == name) {
            deps.push(Dependency {
                name,
                ecosystem,
                manifest: path.clone(),
            });
        }
    }
    Ok(deps)
}

/// Normalises a module or distribution name for comparison: lowercase, `-` and `.` become `_`.
pub fn normalize(name: &str) -> String {
    name.to_lowercase().replace(['-', '.'], "_")
}

/// The normalised top-level module names a dependency can be imported as. Always includes the
/// normalised distribution name; adds the known import name where it differs (PyYAML → yaml,
/// beautifulsoup4 → bs4, scikit-learn → sklearn, Pillow → PIL (normalised: "pil"),
/// python-dateutil → dateutil, …). For Node, scoped packages (`@scope/x`) give no names (a local
/// file cannot be imported as a scoped name); `@types/x` gives nothing.
pub fn import_names(dep: &Dependency) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        let n = normalize(name);
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    };
    match dep.ecosystem {
        Ecosystem::Node => {
            if !dep.name.starts_with('@') {
                add(&dep.name);
            }
        }
        Ecosystem::Python => {
            let norm = normalize(&dep.name);
            add(&norm);
            // The general rules: `python-X` is imported as `X`; `X-binary` and `X-headless` are
            // builds of `X`.
            let mut candidates = vec![norm.clone()];
            if let Some(rest) = norm.strip_prefix("python_").filter(|r| !r.is_empty()) {
                candidates.push(rest.to_owned());
            }
            for suffix in ["_binary", "_headless"] {
                if let Some(base) = norm.strip_suffix(suffix).filter(|b| !b.is_empty()) {
                    candidates.push(base.to_owned());
                }
            }
            for c in &candidates {
                add(c);
                if let Some((_, names)) = PYTHON_IMPORT_NAMES.iter().find(|(d, _)| d == c) {
                    for n in *names {
                        add(n);
                    }
                }
            }
            // Namespace packages shared by a family of distributions.
            for (prefix, module) in PYTHON_NAMESPACE_PREFIXES {
                if norm.starts_with(prefix) {
                    add(module);
                }
            }
            // A dotted distribution (`zope.interface`, `ruamel.yaml`, `discord.py`) is usually
            // imported by its first component.
            if let Some((first, _)) = dep.name.split_once('.')
                && !first.is_empty()
            {
                add(first);
            }
        }
    }
    out
}

/// Well-known Python distributions imported under another name: normalised distribution name,
/// then normalised import names.
const PYTHON_IMPORT_NAMES: &[(&str, &[&str])] = &[
    ("pyyaml", &["yaml"]),
    ("beautifulsoup4", &["bs4"]),
    ("scikit_learn", &["sklearn"]),
    ("scikit_image", &["skimage"]),
    ("scikit_build", &["skbuild"]),
    ("scikit_optimize", &["skopt"]),
    ("scikit_fuzzy", &["skfuzzy"]),
    ("scikit_surprise", &["surprise"]),
    ("pillow", &["pil"]),
    ("pillow_simd", &["pil"]),
    ("python_dateutil", &["dateutil"]),
    ("opencv_python", &["cv2"]),
    ("opencv_python_headless", &["cv2"]),
    ("opencv_contrib_python", &["cv2"]),
    ("opencv_contrib_python_headless", &["cv2"]),
    ("pyzmq", &["zmq"]),
    ("attrs", &["attr", "attrs"]),
    ("pycryptodome", &["crypto"]),
    ("pycrypto", &["crypto"]),
    ("pycryptodomex", &["cryptodome"]),
    ("pyjwt", &["jwt"]),
    ("python_dotenv", &["dotenv"]),
    ("mysqlclient", &["mysqldb"]),
    ("mysql_connector_python", &["mysql"]),
    ("mysql_connector", &["mysql"]),
    ("psycopg2_binary", &["psycopg2"]),
    ("psycopg_binary", &["psycopg"]),
    ("python_magic", &["magic"]),
    ("python_jose", &["jose"]),
    ("python_multipart", &["multipart"]),
    ("pyopenssl", &["openssl"]),
    ("setuptools", &["setuptools", "pkg_resources"]),
    ("ruamel_yaml", &["ruamel"]),
    ("dnspython", &["dns"]),
    ("pyserial", &["serial"]),
    ("pygithub", &["github"]),
    ("python_gitlab", &["gitlab"]),
    ("faiss_cpu", &["faiss"]),
    ("faiss_gpu", &["faiss"]),
    ("tensorflow_gpu", &["tensorflow"]),
    ("tensorflow_cpu", &["tensorflow"]),
    ("tensorflow_macos", &["tensorflow"]),
    ("tf_nightly", &["tensorflow"]),
    ("discord_py", &["discord"]),
    ("py_cord", &["discord"]),
    ("protobuf", &["google"]),
    ("googleapis_common_protos", &["google"]),
    ("google_auth", &["google"]),
    ("google_api_core", &["google"]),
    ("google_genai", &["google"]),
    ("google_generativeai", &["google"]),
    ("google_resumable_media", &["google"]),
    (
        "google_api_python_client",
        &["googleapiclient", "apiclient"],
    ),
    ("grpcio", &["grpc"]),
    ("grpcio_tools", &["grpc_tools"]),
    ("grpcio_status", &["grpc_status"]),
    ("grpcio_health_checking", &["grpc_health"]),
    ("grpcio_reflection", &["grpc_reflection"]),
    ("msgpack_python", &["msgpack"]),
    ("python_levenshtein", &["levenshtein"]),
    (
        "pywin32",
        &[
            "win32api",
            "win32con",
            "win32gui",
            "win32com",
            "win32file",
            "win32process",
            "win32event",
            "win32clipboard",
            "pythoncom",
            "pywintypes",
        ],
    ),
    (
        "pypiwin32",
        &[
            "win32api",
            "win32con",
            "win32gui",
            "win32com",
            "pythoncom",
            "pywintypes",
        ],
    ),
    ("pywin32_ctypes", &["win32ctypes"]),
    ("pywinpty", &["winpty"]),
    ("typing_extensions", &["typing_extensions"]),
    ("pymupdf", &["fitz", "pymupdf"]),
    ("python_docx", &["docx"]),
    ("python_pptx", &["pptx"]),
    ("pymongo", &["pymongo", "bson", "gridfs"]),
    ("gitpython", &["git"]),
    ("pynacl", &["nacl"]),
    ("pyopengl", &["opengl"]),
    ("wxpython", &["wx"]),
    ("pygobject", &["gi"]),
    ("pycairo", &["cairo"]),
    ("pyusb", &["usb"]),
    ("hidapi", &["hid"]),
    ("pyscard", &["smartcard"]),
    ("pysocks", &["socks", "sockshandler"]),
    ("websocket_client", &["websocket"]),
    ("python_telegram_bot", &["telegram"]),
    ("pytelegrambotapi", &["telebot"]),
    ("python_memcached", &["memcache"]),
    ("python_json_logger", &["pythonjsonlogger"]),
    ("djangorestframework", &["rest_framework"]),
    (
        "djangorestframework_simplejwt",
        &["rest_framework_simplejwt"],
    ),
    ("django_cors_headers", &["corsheaders"]),
    ("django_environ", &["environ"]),
    ("django_filter", &["django_filters"]),
    ("django_debug_toolbar", &["debug_toolbar"]),
    ("django_storages", &["storages"]),
    ("django_crispy_forms", &["crispy_forms"]),
    ("django_allauth", &["allauth"]),
    ("django_import_export", &["import_export"]),
    ("django_model_utils", &["model_utils"]),
    ("django_polymorphic", &["polymorphic"]),
    ("django_taggit", &["taggit"]),
    ("factory_boy", &["factory"]),
    ("faker", &["faker"]),
    ("vcrpy", &["vcr"]),
    ("pyhamcrest", &["hamcrest"]),
    ("hydra_core", &["hydra"]),
    ("kafka_python", &["kafka"]),
    ("confluent_kafka", &["confluent_kafka"]),
    ("nats_py", &["nats"]),
    ("paho_mqtt", &["paho"]),
    ("rpi_gpio", &["rpi"]),
    ("argon2_cffi", &["argon2"]),
    ("pdfminer_six", &["pdfminer"]),
    ("py_cpuinfo", &["cpuinfo"]),
    ("pywavelets", &["pywt"]),
    ("pyxdg", &["xdg"]),
    ("gdal", &["osgeo"]),
    ("biopython", &["bio"]),
    ("pyenchant", &["enchant"]),
    ("pyspellchecker", &["spellchecker"]),
    ("speechrecognition", &["speech_recognition"]),
    ("pysoundfile", &["soundfile"]),
    ("ffmpeg_python", &["ffmpeg"]),
    ("newspaper3k", &["newspaper"]),
    ("fpdf2", &["fpdf"]),
    ("camelot_py", &["camelot"]),
    ("tabula_py", &["tabula"]),
    ("slackclient", &["slack"]),
    ("cassandra_driver", &["cassandra"]),
    ("mecab_python3", &["mecab"]),
    ("onnxruntime_gpu", &["onnxruntime"]),
    ("paddlepaddle", &["paddle"]),
    ("paddlepaddle_gpu", &["paddle"]),
    ("mmcv_full", &["mmcv"]),
    ("rdkit_pypi", &["rdkit"]),
    ("pyvmomi", &["pyvmomi", "pyvim"]),
    ("docker_py", &["docker"]),
    ("ansible_core", &["ansible"]),
    ("atlassian_python_api", &["atlassian"]),
    ("pyobjc", &["objc", "foundation", "appkit"]),
    ("pyobjc_core", &["objc"]),
    ("pywebview", &["webview"]),
    ("markdown_it_py", &["markdown_it"]),
    ("matplotlib", &["matplotlib", "mpl_toolkits", "pylab"]),
    ("pysaml2", &["saml2"]),
    ("python3_saml", &["onelogin"]),
    ("python3_openid", &["openid"]),
    ("pykerberos", &["kerberos"]),
    ("pywinrm", &["winrm"]),
    ("pysmb", &["smb", "nmb"]),
    ("keystone_engine", &["keystone"]),
    ("pwntools", &["pwn", "pwnlib"]),
    ("z3_solver", &["z3"]),
    ("pystan", &["stan"]),
    ("umap_learn", &["umap"]),
    ("eth_brownie", &["brownie"]),
    ("py_solc_x", &["solcx"]),
    ("brotlipy", &["brotli"]),
    ("tensorflow_intel", &["tensorflow"]),
];

/// Normalised distribution-name prefixes whose distributions all install into one namespace
/// package.
const PYTHON_NAMESPACE_PREFIXES: &[(&str, &str)] = &[
    ("google_cloud", "google"),
    ("azure_", "azure"),
    ("opentelemetry_", "opentelemetry"),
    ("sphinxcontrib_", "sphinxcontrib"),
    ("apache_airflow", "airflow"),
    ("cupy_", "cupy"),
];

// ---------------------------------------------------------------------------------------------
// Requirement strings (pip requirements lines and PEP 508 strings)
// ---------------------------------------------------------------------------------------------

/// The distribution names in a pip requirements file.
fn requirements_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in join_continuations(text) {
        let line = strip_comment(&line);
        if let Some(name) = requirement_name(line) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Joins lines ending in `\` with the next one, as pip does. A comment line ends a continuation.
fn join_continuations(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let is_comment = line.trim_start().starts_with('#');
        match line.strip_suffix('\\') {
            Some(head) if !is_comment => {
                pending.push_str(head);
            }
            _ => {
                pending.push_str(line);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

/// Cuts a pip comment: a `#` at the start of the line or after whitespace, to the end of the
/// line. A `#` inside a word (a URL's `#egg=` fragment) is kept.
fn strip_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_space {
            return &line[..i];
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// The distribution name a single requirement names: a PEP 508 string (`name[extras] >= 1;
/// marker`, `name @ url`), a pip option line (`-e url#egg=name`), a URL or a path (`#egg=name`, or
/// an archive's file name). None for anything else (other options, local paths, unreadable
/// lines).
fn requirement_name(line: &str) -> Option<&str> {
    let s = line.trim();
    if s.is_empty() {
        return None;
    }
    if let Some(option) = s.strip_prefix('-') {
        // Only an editable install names a package; `-r`, `-c`, `--index-url`, `--hash`… do not.
        let target = option
            .strip_prefix("-editable")
            .or_else(|| option.strip_prefix('e'))?;
        let target = target.trim_start_matches(|c: char| c.is_whitespace() || c == '=');
        return url_or_path_name(target);
    }
    let first_token = s.split(|c: char| c.is_whitespace() || c == ';').next()?;
    if archive_name(first_token).is_some() && !first_token.contains(['[', '<', '>', '=', '!', '~'])
    {
        return url_or_path_name(s);
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    if is_name(name) {
        let spaced = rest.starts_with(char::is_whitespace);
        let rest = rest.trim_start();
        let ok = rest.is_empty()
            || rest.starts_with(['[', '(', '<', '>', '=', '!', '~', ';', '@', ','])
            || (spaced && rest.starts_with(['-', '#']));
        if ok {
            return Some(name);
        }
    }
    url_or_path_name(s)
}

/// True when `s` is a valid distribution name (PEP 508): ASCII letters, digits, `.`, `_`, `-`,
/// starting and ending with a letter or digit.
fn is_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        }
        _ => false,
    }
}

/// The name a URL or path requirement installs: its `#egg=name` fragment, or the distribution
/// named by a wheel or sdist file name. None for a plain local directory or VCS URL.
fn url_or_path_name(s: &str) -> Option<&str> {
    let token = s.split(char::is_whitespace).next()?;
    if let Some(i) = token.find("#egg=").or_else(|| token.find("&egg=")) {
        let frag = &token[i + 5..];
        let end = frag
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .unwrap_or(frag.len());
        let name = frag[..end].trim_end_matches(['.', '_', '-']);
        return is_name(name).then_some(name);
    }
    let without_fragment = token.split(['#', '?']).next()?;
    archive_name(without_fragment)
}

/// The distribution named by an archive's file name (last path component of `s`): a wheel
/// (`name-1.0-py3-none-any.whl`) or an sdist (`name-1.0.tar.gz`).
fn archive_name(s: &str) -> Option<&str> {
    let file = s.rsplit(['/', '\\']).next()?;
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".whl") {
        let name = file.split('-').next()?;
        return is_name(name).then_some(name);
    }
    let stem_len = [".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".zip"]
        .iter()
        .find(|ext| lower.ends_with(*ext))
        .map(|ext| file.len() - ext.len())?;
    let stem = file.get(..stem_len)?;
    // The version starts at the last `-` followed by a digit.
    let split = stem
        .match_indices('-')
        .map(|(i, _)| i)
        .rfind(|&i| stem[i + 1..].starts_with(|c: char| c.is_ascii_digit()))?;
    let name = &stem[..split];
    is_name(name).then_some(name)
}

// ---------------------------------------------------------------------------------------------
// TOML manifests: pyproject.toml, Pipfile
// ---------------------------------------------------------------------------------------------

fn parse_toml(content: &[u8]) -> Result<toml::Table, String> {
    let text = std::str::from_utf8(content)
        .map_err(|e| format!("not valid UTF-8 (at byte {})", e.valid_up_to()))?;
    toml::from_str::<toml::Table>(text).map_err(|e| {
        let message = one_line(e.message());
        match e.span() {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                format!("TOML parse error at line {line}, column {column}: {message}")
            }
            None => format!("TOML parse error: {message}"),
        }
    })
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// A possibly multi-line message as one line.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn sub_table<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Table> {
    table.get(key).and_then(toml::Value::as_table)
}

/// Pushes the names of an array of requirement strings (non-strings, such as PEP 735
/// `{include-group = …}` tables, are skipped).
fn push_requirement_array(value: Option<&toml::Value>, out: &mut Vec<String>) {
    let Some(items) = value.and_then(toml::Value::as_array) else {
        return;
    };
    for item in items {
        if let Some(name) = item.as_str().and_then(requirement_name) {
            out.push(name.to_owned());
        }
    }
}

/// Pushes the keys of a table of `name = spec` entries (Poetry, Pipfile), skipping `python`.
fn push_keys(value: Option<&toml::Value>, out: &mut Vec<String>) {
    let Some(table) = value.and_then(toml::Value::as_table) else {
        return;
    };
    for key in table.keys() {
        if is_name(key) && !key.eq_ignore_ascii_case("python") {
            out.push(key.clone());
        }
    }
}

fn pyproject_names(doc: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(project) = sub_table(doc, "project") {
        push_requirement_array(project.get("dependencies"), &mut out);
        if let Some(extras) = sub_table(project, "optional-dependencies") {
            for list in extras.values() {
                push_requirement_array(Some(list), &mut out);
            }
        }
    }
    if let Some(groups) = sub_table(doc, "dependency-groups") {
        for list in groups.values() {
            push_requirement_array(Some(list), &mut out);
        }
    }
    if let Some(tool) = sub_table(doc, "tool") {
        if let Some(poetry) = sub_table(tool, "poetry") {
            push_keys(poetry.get("dependencies"), &mut out);
            push_keys(poetry.get("dev-dependencies"), &mut out);
            if let Some(groups) = sub_table(poetry, "group") {
                for group in groups.values() {
                    if let Some(group) = group.as_table() {
                        push_keys(group.get("dependencies"), &mut out);
                    }
                }
            }
        }
        if let Some(uv) = sub_table(tool, "uv") {
            push_requirement_array(uv.get("dev-dependencies"), &mut out);
        }
        if let Some(pdm_groups) =
            sub_table(tool, "pdm").and_then(|p| sub_table(p, "dev-dependencies"))
        {
            for list in pdm_groups.values() {
                push_requirement_array(Some(list), &mut out);
            }
        }
    }
    out
}

fn pipfile_names(doc: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    push_keys(doc.get("packages"), &mut out);
    push_keys(doc.get("dev-packages"), &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// setup.cfg
// ---------------------------------------------------------------------------------------------

/// One `key = value` entry of an INI file; a multi-line value keeps its line breaks.
struct IniEntry {
    section: String,
    key: String,
    value: String,
}

/// A small INI reader in the manner of Python's `configparser` (as setuptools uses it): `[section]`
/// headers, `key = value` or `key: value` (keys lowercased), indented continuation lines, whole-line
/// `#` and `;` comments. Lines it cannot read are skipped.
fn read_ini(text: &str) -> Vec<IniEntry> {
    let mut entries: Vec<IniEntry> = Vec::new();
    let mut section = String::new();
    // Whether the last entry may still take continuation lines.
    let mut open = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        if indented && open {
            if let Some(entry) = entries.last_mut() {
                entry.value.push('\n');
                entry.value.push_str(trimmed);
            }
            continue;
        }
        open = false;
        if trimmed.starts_with('[') {
            if let Some(end) = trimmed.find(']') {
                section = trimmed[1..end].trim().to_owned();
            }
            continue;
        }
        if let Some(i) = trimmed.find(['=', ':']) {
            entries.push(IniEntry {
                section: section.clone(),
                key: trimmed[..i].trim().to_ascii_lowercase(),
                value: trimmed[i + 1..].trim().to_owned(),
            });
            open = true;
        }
    }
    entries
}

fn setup_cfg_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in read_ini(text) {
        let wanted = match entry.section.as_str() {
            "options" => matches!(entry.key.as_str(), "install_requires" | "tests_require"),
            "options.extras_require" => true,
            _ => false,
        };
        if wanted {
            push_requirement_list(&entry.value, &mut out);
        }
    }
    out
}

/// Environment-marker variables: what a single-line `install_requires = a; python_version < "3"`
/// wrongly splits off as a requirement.
const MARKER_VARIABLES: &[&str] = &[
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
];

/// A setuptools requirements list: one requirement a line, or a single line of `;`-separated
/// requirements. A `file:` directive is another file, which is not read here.
fn push_requirement_list(value: &str, out: &mut Vec<String>) {
    let value = value.trim();
    if value.starts_with("file:") {
        return;
    }
    let items: Vec<&str> = if value.contains('\n') {
        value.lines().collect()
    } else {
        value.split(';').collect()
    };
    for item in items {
        let item = strip_comment(item);
        if let Some(name) = requirement_name(item)
            && !MARKER_VARIABLES.contains(&name)
        {
            out.push(name.to_owned());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// package.json
// ---------------------------------------------------------------------------------------------

fn package_json_names(content: &[u8]) -> Result<Vec<String>, String> {
    let doc: serde_json::Value = serde_json::from_slice(content).map_err(|e| {
        let text = e.to_string();
        if e.line() == 0 {
            return format!("JSON parse error: {}", one_line(&text));
        }
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = text.strip_suffix(&suffix).unwrap_or(&text);
        format!(
            "JSON parse error at line {}, column {}: {}",
            e.line(),
            e.column(),
            one_line(message)
        )
    })?;
    let Some(doc) = doc.as_object() else {
        return Err("expected a JSON object at the top level".to_owned());
    };
    let mut out = Vec::new();
    for section in [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ] {
        if let Some(deps) = doc.get(section).and_then(serde_json::Value::as_object) {
            out.extend(deps.keys().filter(|k| !k.trim().is_empty()).cloned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
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
url = "https://pypi.org/simple"
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
}
