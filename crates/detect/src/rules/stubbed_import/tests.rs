use super::*;
use crate::testing::{Spec::*, lines, run};

fn added(path: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Add(path, new)]), Rule::StubbedImport)
}

fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Modify(path, old, new)]), Rule::StubbedImport)
}

#[test]
fn python_try_only_imports() {
    let old = "import os\n\nimport sqlglot\n\ndef parse(s):\n    return sqlglot.parse(s)\n";
    let new = "import os\n\ntry:\n    import sqlglot\nexcept ImportError:\n    sqlglot = None\n\ndef parse(s):\n    return sqlglot.parse(s)\n";
    assert_eq!(
        modified("src/app/parse.py", old, new),
        vec![5],
        "one flag, on the except"
    );
    for (new, line) in [
        ("try:\n    import yaml\nexcept:\n    pass\n", 3),
        (
            "try:\n    from yaml import safe_load\nexcept Exception:\n    safe_load = None\n",
            3,
        ),
        (
            "if True:\n    try:\n        from a import (\n            b,\n            c,\n        )\n    except ImportError:\n        b = c = None\n",
            7,
        ),
        (
            "try:\n    import a\nexcept ValueError:\n    raise\nexcept ImportError:\n    a = None\n",
            5,
        ),
    ] {
        assert_eq!(added("pkg/mod.py", new), vec![line], "{new}");
    }
}

#[test]
fn python_try_that_does_the_work_or_reraises_is_not_a_stub() {
    for new in [
        "try:\n    import yaml\n    data = yaml.safe_load(f)\nexcept Exception:\n    log.warning('bad config')\n",
        "try:\n    import yaml\nexcept ImportError as e:\n    raise RuntimeError('install pyyaml') from e\n",
        "try:\n    conn.execute(q)\nexcept Exception:\n    pass\n",
        "# try:\n#     import yaml\n# except ImportError:\n#     pass\n",
        "s = '''\ntry:\n    import yaml\nexcept ImportError:\n    pass\n'''\n",
    ] {
        assert!(added("pkg/mod.py", new).is_empty(), "{new}");
    }
    // A version written at build time (setuptools_scm), absent from a checkout.
    for new in [
        "try:\n    from ._version import __version__\nexcept ImportError:\n    __version__ = '0.0.0+unknown'\n",
        "try:\n    from importlib.metadata import version\nexcept ImportError:\n    version = None\n",
    ] {
        assert!(added("pkg/mod.py", new).is_empty(), "{new}");
    }
    // The lookalike: the same guard around the package's own code.
    assert_eq!(
        added(
            "pkg/mod.py",
            "try:\n    from ._pricing import __version__, total\nexcept ImportError:\n    total = None\n"
        ),
        vec![3]
    );
}

#[test]
fn python_tests_are_not_production_code() {
    let stub = "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n";
    assert!(added("tests/test_x.py", stub).is_empty());
    // A suite kept inside its package, in a module not named `test_*`.
    assert!(added("flask/testsuite/reqctx.py", stub).is_empty());
    // The package's own modules are production code, whatever their names.
    assert_eq!(added("flask/testsuite_runner.py", stub), vec![3]);
    assert_eq!(added("flask/testing.py", stub), vec![3]);
}

#[test]
fn python_existing_stub_edited_or_reindented_is_not_new() {
    let old = "try:\n    import yaml\nexcept ImportError:  # optional\n    yaml = None\n";
    let new = "try:\n    import yaml\nexcept ImportError:  # optional: only for config files\n    yaml = None\n";
    assert!(modified("pkg/conf.py", old, new).is_empty());
    let new = "if ENABLED:\n    try:\n        import yaml\n    except ImportError:\n        yaml = None\n";
    assert!(modified("pkg/conf.py", old, new).is_empty());
    // A handler that used to re-raise and now carries on is new.
    let old = "try:\n    import yaml\nexcept ImportError:\n    raise\n";
    let new = "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n";
    assert_eq!(modified("pkg/conf.py", old, new), vec![3]);
}

#[test]
fn python_sys_modules_and_none() {
    assert_eq!(
        added(
            "pkg/shim.py",
            "import sys, types\nsys.modules['sqlglot'] = types.ModuleType('sqlglot')\n"
        ),
        vec![2]
    );
    assert_eq!(
        added(
            "pkg/shim.py",
            "import sys\nsys.modules.setdefault('x', object())\n"
        ),
        vec![2]
    );
    assert!(added("pkg/shim.py", "import sys\nif 'x' in sys.modules:\n    m = sys.modules['x']\nok = sys.modules['x'] == m\n").is_empty());
    let old = "import numpy as np\n\ndef f():\n    return np.zeros(3)\n";
    let new = "np = None\n\ndef f():\n    return np.zeros(3)\n";
    assert_eq!(modified("pkg/calc.py", old, new), vec![1]);
    assert!(
        added("pkg/calc.py", "import os\n_cache = None\n").is_empty(),
        "not an imported name"
    );
}

#[test]
fn conftest_stands_a_module_in_for_the_whole_run() {
    assert_eq!(
        added(
            "tests/conftest.py",
            "import sys\nfrom unittest.mock import MagicMock\n\nsys.modules[\"numpy\"] = MagicMock()\n"
        ),
        vec![4]
    );
    for new in [
        // Scoped to a fixture or a function; a try that only imports (a test's business).
        "import sys\nimport pytest\n\n@pytest.fixture\ndef no_numpy(monkeypatch):\n    sys.modules['numpy'] = None\n    yield\n",
        "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n",
        "import sys\nHAS_NUMPY = 'numpy' in sys.modules\n",
    ] {
        assert!(added("tests/conftest.py", new).is_empty(), "{new}");
    }
    // A test file's own writes are the test's business.
    assert!(
        added(
            "tests/test_opt.py",
            "import sys\nsys.modules['numpy'] = None\n\ndef test_a():\n    assert f() is None\n"
        )
        .is_empty()
    );
}

#[test]
fn javascript_try_require() {
    let new = "let sharp;\ntry {\n  sharp = require('sharp');\n} catch (e) {\n  sharp = null;\n}\n";
    assert_eq!(added("src/img.js", new), vec![4]);
    let new = "try {\n  const { a, b } = require(\"lib\")\n  var c = await import('c')\n}\ncatch {\n  module.exports = {}\n}\n";
    assert_eq!(added("src/x.ts", new), vec![5]);
    assert_eq!(
        added(
            "src/y.mjs",
            "const m = await import('optional-dep').catch(() => null);\n"
        ),
        vec![1]
    );
}

#[test]
fn javascript_non_stubs() {
    for new in [
        "try {\n  const a = require('a');\n  a.run();\n} catch (e) {\n  console.error(e);\n}\n",
        "try {\n  require('a');\n} catch (e) {\n  throw new Error('install a');\n}\n",
        "// try { require('a') } catch (e) {}\n",
        "const s = `try { require('a') } catch (e) {}`;\n",
        "import('./page').then(m => m.render());\n",
    ] {
        assert!(added("src/z.js", new).is_empty(), "{new}");
    }
    assert!(added("src/z.test.js", "try { require('a') } catch (e) {}\n").is_empty());
}

#[test]
fn message_names_the_module() {
    let r = run(&[Add(
        "pkg/m.py",
        "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n",
    )]);
    assert_eq!(
        r.flags[0].message,
        "newly carries on when `yaml` fails to import: `except ImportError` closes a `try` that only imports"
    );
    assert_eq!(r.flags[0].snippet.as_deref(), Some("except ImportError:"));
}

#[test]
fn python_handler_importing_an_alternative_is_not_a_stub() {
    // If the alternative is missing too, the ImportError propagates: nothing carries on
    // without a dependency.
    let old = "from itsdangerous import simplejson as _json\n";
    let new = "try:\n    from itsdangerous import simplejson as _json\nexcept ImportError:\n    from itsdangerous import json as _json\n";
    assert!(modified("pkg/json.py", old, new).is_empty());
    for new in [
        "try:\n    import ujson as json\nexcept (ImportError, ModuleNotFoundError):\n    import json\n",
        "try:\n    import chardet\nexcept ImportError:\n    import charset_normalizer as chardet\n    import warnings\n\n    warnings.filterwarnings('ignore', 'x', module='charset_normalizer')\n",
        "try:\n    from werkzeug.urls import url_quote\nexcept ImportError:\n    from urlparse import quote as url_quote\n",
        "try:\n    import simplejson as json\nexcept ImportError:\n    import json\n    HAS_SIMPLEJSON = False\n",
        "try:\n    from a import (\n        b,\n        c,\n    )\nexcept ImportError:\n    from d import (\n        b,\n        c as c,\n    )\n",
        "try:\n    import a\nexcept ImportError:\n    try:\n        import b as a\n    except ImportError:\n        import c as a\n",
    ] {
        assert!(added("pkg/mod.py", new).is_empty(), "{new}");
    }
}

#[test]
fn python_handler_with_a_stand_in_is_still_a_stub() {
    for new in [
        // Nothing imported in its place.
        "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n",
        "try:\n    import yaml\nexcept ImportError:\n    HAS_YAML = False\n",
        "try:\n    import yaml\nexcept ImportError:\n    class yaml:\n        def safe_load(s):\n            return {}\n",
        // A mock, a bare namespace, or the project's own module in its place.
        "try:\n    import yaml\nexcept ImportError:\n    from unittest.mock import MagicMock as yaml\n",
        // A stand-in the tests wrote, imported under the dependency's name.
        "try:\n    import sqlglot\nexcept ImportError:\n    from tests.fakes import sqlglot\n",
        "try:\n    from redis import Redis\nexcept ImportError:\n    from app.testing.stubs import FakeRedis as Redis\n",
        "try:\n    import yaml\nexcept ImportError:\n    from unittest import mock\n    yaml = mock.MagicMock()\n",
        "try:\n    import yaml\nexcept ImportError:\n    from types import SimpleNamespace as yaml\n",
        "try:\n    import yaml\nexcept ImportError:\n    from . import _fake_yaml as yaml\n",
        "try:\n    import yaml\nexcept ImportError:\n    from pkg._compat import yaml\n",
        // Another module imported, but not under the names the code uses.
        "try:\n    import yaml\nexcept ImportError:\n    import json\n",
        // An alternative, then patched or replaced.
        "try:\n    import yaml\nexcept ImportError:\n    import json as yaml\n    yaml.safe_load = lambda s: {}\n",
        "try:\n    import yaml\nexcept ImportError:\n    import json as yaml\n    yaml = None\n",
    ] {
        assert_eq!(added("pkg/mod.py", new), vec![3], "{new}");
    }
    // A nested fallback that ends in a stub is flagged once, on its own handler.
    let new = "try:\n    import a\nexcept ImportError:\n    try:\n        import b as a\n    except ImportError:\n        a = None\n";
    assert_eq!(added("pkg/mod.py", new), vec![6]);
}

#[test]
fn python_function_local_named_like_an_import_is_not_a_stub() {
    let old = "from pkg.fixtures import fixture\n\n\ndef helper():\n    return 1\n";
    let new = "from pkg.fixtures import fixture\n\n\ndef helper():\n    return 1\n\n\ndef capturing_output(request):\n    if request.active:\n        fixture = None\n    else:\n        fixture = make(request)\n    return fixture\n";
    assert!(modified("pkg/capture.py", old, new).is_empty());
    let new = "import yaml\n\n\nclass Loader:\n    yaml = None\n";
    assert!(added("pkg/load.py", new).is_empty(), "a class attribute");
    // Module level, under any `if`, or through `global`: the import itself is rebound.
    for (new, line) in [
        ("import yaml\n\nif OFFLINE:\n    yaml = None\n", 4),
        (
            "import yaml\n\n\ndef disable():\n    global yaml\n    yaml = None\n",
            6,
        ),
        (
            "import yaml\n\n\ndef disable():\n    global json, yaml\n    if True:\n        yaml = None\n",
            7,
        ),
    ] {
        assert_eq!(added("pkg/load.py", new), vec![line], "{new}");
    }
}

#[test]
fn python_guard_that_existed_with_another_spelling_of_the_import_is_not_new() {
    let old = "def parse(doc):\n    try:\n        if FAST:\n            from lxml import etree\n        else:\n            import xml.etree.ElementTree as etree\n    except ImportError:\n        return None\n    return etree.fromstring(doc)\n";
    let new = "def parse(doc):\n    try:\n        from lxml import etree\n    except ImportError:\n        return None\n    return etree.fromstring(doc)\n";
    assert!(modified("pkg/utils.py", old, new).is_empty());
    // A body of conditional imports is a `try` that only imports.
    assert_eq!(added("pkg/utils.py", old), vec![7]);
    // The same body, but a handler that used to fail and now carries on, is new.
    let old = "try:\n    if FAST:\n        from lxml import etree\n    else:\n        import xml.etree.ElementTree as etree\nexcept ImportError:\n    raise\n";
    let new = "try:\n    from lxml import etree\nexcept ImportError:\n    etree = None\n";
    assert_eq!(modified("pkg/utils.py", old, new), vec![3]);
    // A guard moved to another file with its import respelled is not new either.
    let r = run(&[
        Modify(
            "pkg/a.py",
            "import os\ntry:\n    import simplejson as json\nexcept ImportError:\n    json = None\n",
            "import os\n",
        ),
        Modify(
            "pkg/b.py",
            "import sys\n",
            "import sys\ntry:\n    import ujson as json\nexcept ImportError:\n    json = None\n",
        ),
    ]);
    assert!(lines(&r, Rule::StubbedImport).is_empty());
    // Moved, and carrying on another way.
    let r = run(&[
        Modify(
            "pkg/warnings.py",
            "def f(src):\n    try:\n        import tracemalloc\n    except ImportError:\n        pass\n    else:\n        log(tracemalloc)\n",
            "def f(src):\n    log(message(src))\n",
        ),
        Add(
            "pkg/trace.py",
            "def message(src):\n    try:\n        import tracemalloc\n    except ImportError:\n        return ''\n    return tracemalloc.get(src)\n",
        ),
    ]);
    assert!(lines(&r, Rule::StubbedImport).is_empty());
    // A guard of other names, where one was removed, is new.
    let r = run(&[
        Modify(
            "pkg/a.py",
            "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n",
            "import yaml\n",
        ),
        Add(
            "pkg/b.py",
            "try:\n    import toml\nexcept ImportError:\n    toml = None\n",
        ),
    ]);
    assert_eq!(lines(&r, Rule::StubbedImport), vec![3]);
}

#[test]
fn python_platform_optional_stdlib_is_not_a_dependency() {
    let old = "import os\n\n\ndef capture():\n    return 1\n";
    let new = "import os\n\n\ndef capture():\n    return 1\n\n\ndef _readline_workaround():\n    try:\n        import readline\n    except ImportError:\n        pass\n";
    assert!(modified("pkg/capture.py", old, new).is_empty());
    for new in [
        "import ssl\ntry:\n    import ssl\nexcept ImportError:\n    ssl = None\n",
        "try:\n    import winreg\nexcept ImportError:\n    import _winreg as winreg\n",
        "try:\n    import fcntl, termios\nexcept ImportError:\n    fcntl = termios = None\n",
        "try:\n    from ctypes import wintypes\nexcept (ImportError, ValueError):\n    wintypes = None\n",
    ] {
        assert!(added("pkg/term.py", new).is_empty(), "{new}");
    }
    // A dependency beside it, a relative import, or the project's own package of that name.
    for (path, new, line) in [
        (
            "pkg/term.py",
            "try:\n    import readline\n    import yaml\nexcept ImportError:\n    yaml = None\n",
            4,
        ),
        (
            "pkg/term.py",
            "try:\n    from . import resource\nexcept ImportError:\n    resource = None\n",
            3,
        ),
        (
            "resource/api.py",
            "try:\n    import resource\nexcept ImportError:\n    resource = None\n",
            3,
        ),
    ] {
        assert_eq!(added(path, new), vec![line], "{new}");
    }
}

#[test]
fn python_sys_modules_alias_in_the_own_package_is_not_a_stand_in() {
    let old = "import sys\n\nfor package in ('urllib3', 'idna'):\n    locals()[package] = __import__(package)\n";
    let new = "import sys\nimport chardet\n\nfor package in ('urllib3', 'idna'):\n    locals()[package] = __import__(package)\n\ntarget = chardet.__name__\nfor mod in list(sys.modules):\n    if mod == target or mod.startswith(target + '.'):\n        sys.modules['pkg.packages.' + target.replace(target, 'chardet')] = sys.modules[mod]\n";
    assert!(modified("pkg/packages.py", old, new).is_empty());
    for new in [
        "import sys\nsys.modules[f\"pkg.vendor.{name}\"] = sys.modules[name]\n",
        "import sys\nsys.modules[__name__ + '.compat'] = sys.modules['pkg._compat']\n",
    ] {
        assert!(added("pkg/packages.py", new).is_empty(), "{new}");
    }
    // A dependency's name, or anything but a real module, is a stand-in.
    for new in [
        "import sys, types\nsys.modules['chardet'] = types.ModuleType('chardet')\n",
        "import sys\nsys.modules['yaml'] = sys.modules['json']\n",
        "import sys\nsys.modules['chardet.' + mod] = sys.modules[mod]\n",
        "import sys\nfrom unittest import mock\nsys.modules['pkg.packages.chardet'] = mock.MagicMock()\n",
        "import sys\nsys.modules['pkg.packages.chardet'] = sys.modules['json'] or stub\n",
    ] {
        assert_eq!(added("pkg/packages.py", new).len(), 1, "{new}");
    }
}

#[test]
fn javascript_load_of_a_specifier_built_at_run_time_is_not_a_dependency() {
    for new in [
        "async function patch(url) {\n  try {\n    await import(/* @vite-ignore */ this.options.base + url)\n  } catch {\n    this.requestFullReload()\n    return\n  }\n}\n",
        "try {\n  const m = require(`./locales/${lang}.js`)\n} catch (e) {\n  m = {}\n}\n",
        "const mod = await import(base + path).catch(() => null);\n",
    ] {
        assert!(added("src/hmr.ts", new).is_empty(), "{new}");
    }
    // A literal, or a single name that may hold one, is a dependency's load.
    for new in [
        "try {\n  await import('lodash')\n} catch {}\n",
        "try {\n  const m = require(name)\n} catch (e) {}\n",
        "try {\n  require('a' + '')\n  require('lodash')\n} catch (e) {}\n",
    ] {
        assert_eq!(added("src/hmr.ts", new).len(), 1, "{new}");
    }
}

#[test]
fn javascript_dynamic_import_after_a_member_pick_or_in_parentheses() {
    for (new, line) in [
        (
            "const sharp = await import(\"sharp\").then((m) => m.default).catch(() => null);\n",
            1,
        ),
        (
            "const s = await import('sharp')\n  .then(m => m.default)\n  .catch(() => ({ resize: () => {} }));\n",
            1,
        ),
        (
            "let sharp;\ntry {\n  sharp = (await import(\"sharp\")).default;\n} catch {\n  sharp = null;\n}\n",
            4,
        ),
    ] {
        assert_eq!(added("src/index.mjs", new), vec![line], "{new}");
    }
    for new in [
        // The `.then` does the work: its failure is the page's, not a missing dependency.
        "import('./page').then(m => m.render(root)).catch(err => console.error(err));\n",
        // The handler only says what to install.
        "const s = await import('sharp').catch((e) => { throw new Error('npm i sharp') });\n",
        "try {\n  sharp = (await import('sharp')).default;\n  sharp.cache(false);\n} catch {}\n",
    ] {
        assert!(added("src/index.mjs", new).is_empty(), "{new}");
    }
}

#[test]
fn ruby_begin_require_rescue_load_error() {
    let old = "require \"nokogiri\"\n\nmodule Scrape\nend\n";
    let new = "begin\n  require \"nokogiri\"\nrescue LoadError\n  nil\nend\n\nmodule Scrape\nend\n";
    assert_eq!(modified("lib/scrape.rb", old, new), vec![3]);
    for (new, line) in [
        (
            "begin\n  require 'a'\n  require 'a/ext'\nrescue LoadError\nend\n",
            4,
        ),
        (
            "module M\n  begin\n    require 'oj'\n  rescue ::LoadError => e\n    OJ = nil\n  end\nend\n",
            4,
        ),
        (
            "begin\n  require 'a'\nrescue NameError, ScriptError\n  A = false\nend\n",
            3,
        ),
    ] {
        assert_eq!(added("lib/x.rb", new), vec![line], "{new}");
    }
    let r = run(&[Add(
        "lib/x.rb",
        "begin\n  require 'oj'\nrescue LoadError\nend\n",
    )]);
    assert_eq!(
        r.flags[0].message,
        "newly carries on when `oj` fails to load: `rescue LoadError` closes a `begin` that only requires"
    );
}

#[test]
fn ruby_non_stubs() {
    for new in [
        // Gives up with a reason, or loads a real alternative.
        "begin\n  require 'pg'\nrescue LoadError\n  warn 'add pg to your Gemfile'\n  raise\nend\n",
        "begin\n  require 'oj'\nrescue LoadError\n  require 'json'\nend\n",
        "begin\n  require 'a'\nrescue LoadError => e\n  abort e.message\nend\n",
        // The body does more than require: the rescue guards the work.
        "begin\n  require 'a'\n  A.setup!\nrescue LoadError\nend\n",
        // A modifier rescue does not catch LoadError; another class does not either.
        "require 'a' rescue nil\n",
        "begin\n  require 'a'\nrescue StandardError\n  nil\nend\n",
        "# begin\n#   require 'a'\n# rescue LoadError\n# end\n",
    ] {
        assert!(added("lib/x.rb", new).is_empty(), "{new}");
    }
    // A spec's own business.
    assert!(
        added(
            "spec/x_spec.rb",
            "begin\n  require 'a'\nrescue LoadError\nend\n"
        )
        .is_empty()
    );
}
