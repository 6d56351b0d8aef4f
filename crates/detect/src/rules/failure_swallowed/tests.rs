use crate::flag::Rule;
use crate::testing::{Spec::*, lines, messages, run};

fn added(path: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Add(path, new)]), Rule::FailureSwallowed)
}

fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Modify(path, old, new)]), Rule::FailureSwallowed)
}

const PY_BASE: &str = "\
def load(path):
    with open(path) as f:
        return parse(f.read())
";

#[test]
fn python_handlers_of_everything_that_do_nothing() {
    // The base let the failure through; the change makes it vanish.
    let swallowed = "\
def load(path):
    try:
        with open(path) as f:
            return parse(f.read())
    except Exception:
        pass
";
    assert_eq!(modified("app/config.py", PY_BASE, swallowed), [5]);
    let report = run(&[Modify("app/config.py", PY_BASE, swallowed)]);
    assert_eq!(
        messages(&report, Rule::FailureSwallowed),
        ["newly catches every failure and carries on: `except Exception: pass`"]
    );
    for handler in [
        "    except:\n        pass\n",
        "    except BaseException as e:  # keep going\n        ...\n",
        "    except (Exception, ValueError):\n        pass\n",
        "    except Exception: pass\n",
    ] {
        let new = format!("def load(path):\n    try:\n        return parse(path)\n{handler}");
        assert_eq!(added("app/load.py", &new), [4], "{handler}");
    }
    let loop_body = "\
def load_all(paths):
    for p in paths:
        try:
            yield parse(p)
        except Exception:
            continue
";
    assert_eq!(added("app/load.py", loop_body), [5]);
    let suppressed = "\
from contextlib import suppress

def load(path):
    with suppress(Exception):
        return parse(path)
";
    assert_eq!(added("app/load.py", suppressed), [4]);
}

#[test]
fn python_lookalikes_that_are_no_swallowed_failure() {
    for handler in [
        // A named failure, chosen on purpose.
        "    except KeyError:\n        pass\n",
        "    except (OSError, ValueError):\n        pass\n",
        "    except ExceptionGroup:\n        pass\n",
        // Handlers that do something.
        "    except Exception:\n        log.exception('load failed')\n",
        "    except Exception:\n        raise\n",
        "    except Exception as e:\n        return Error(e)\n",
        "    except Exception:\n        pass\n        return None\n",
    ] {
        let new = format!("def load(path):\n    try:\n        return parse(path)\n{handler}");
        assert_eq!(added("app/load.py", &new), Vec::<u32>::new(), "{handler}");
    }
    // An optional dependency: stubbed-import's to judge.
    let optional = "try:\n    import ujson as json\nexcept Exception:\n    pass\n";
    assert!(added("app/fast.py", optional).is_empty());
    // A finaliser may not raise.
    let finaliser = "class Conn:\n    def __del__(self):\n        try:\n            self.close()\n        except Exception:\n            pass\n";
    assert!(added("app/conn.py", finaliser).is_empty());
    // In a test, a fixture or the test set-up: not production code.
    let swallowed = "def f():\n    try:\n        g()\n    except Exception:\n        pass\n";
    for path in ["tests/test_load.py", "tests/fixtures/app.py", "conftest.py"] {
        assert!(added(path, swallowed).is_empty(), "{path}");
    }
    // The base had it: moved or re-indented, it is not new.
    let moved = format!("import os\n\n\n{swallowed}");
    assert!(modified("app/x.py", swallowed, &moved).is_empty());
}

#[test]
fn javascript_empty_catches_and_promise_handlers_that_do_nothing() {
    let base = "export async function load(path) {\n  return parse(await read(path));\n}\n";
    let swallowed = "export async function load(path) {\n  try {\n    return parse(await read(path));\n  } catch (err) {\n    // ignore\n  }\n}\n";
    assert_eq!(modified("src/load.ts", base, swallowed), [4]);
    assert_eq!(
        added(
            "src/a.js",
            "function f() {\n  try {\n    g();\n  } catch {}\n}\n"
        ),
        [4]
    );
    assert_eq!(
        added(
            "src/a.ts",
            "function f() {\n  try { g(); } catch (e: unknown) {}\n}\n"
        ),
        [2]
    );
    for handler in [
        ".catch(() => {})",
        ".catch(() => undefined)",
        ".catch((_e) => null)",
        ".catch(function () {})",
        ".catch(noop)",
        ".catch(_.noop)",
    ] {
        let new = format!("export const ready = start(){handler};\n");
        assert_eq!(added("src/boot.js", &new), [1], "{handler}");
    }
}

#[test]
fn javascript_lookalikes() {
    for code in [
        "try {\n  g();\n} catch (e) {\n  logger.warn(e);\n}\n",
        "try {\n  g();\n} catch (e) {\n  throw new LoadError(e);\n}\n",
        "start().catch((e) => console.error(e));\n",
        "start().catch(handleError);\n",
        "start().catch(() => fallback());\n",
        // An optional module: stubbed-import's.
        "let sharp;\ntry {\n  sharp = require('sharp');\n} catch {}\n",
        // `catch` in a string or a comment.
        "const s = 'catch {}'; // catch {}\n",
    ] {
        assert!(added("src/a.js", code).is_empty(), "{code}");
    }
    let swallowed = "try {\n  g();\n} catch {}\n";
    for path in [
        "src/a.test.js",
        "test/a.js",
        "__tests__/a.ts",
        "test/fixtures/a.js",
    ] {
        assert!(added(path, swallowed).is_empty(), "{path}");
    }
}

#[test]
fn java_kotlin_csharp_and_php() {
    let java = "class A {\n  void f() {\n    try {\n      g();\n    } catch (Exception e) {\n    }\n  }\n}\n";
    assert_eq!(added("src/main/java/A.java", java), [5]);
    let kotlin = "fun f() {\n    try {\n        g()\n    } catch (e: Throwable) {}\n}\n";
    assert_eq!(added("src/main/kotlin/A.kt", kotlin), [4]);
    let csharp = "class A {\n  void F() {\n    try { G(); } catch { }\n    try { G(); } catch (Exception) { }\n  }\n}\n";
    assert_eq!(added("src/A.cs", csharp), [3, 4]);
    let php = "<?php\nfunction f() {\n  try { g(); } catch (\\Throwable $e) {}\n}\n";
    assert_eq!(added("src/A.php", php), [3]);
    // A named failure, and a handler that does something.
    for java in [
        "class A { void f() { try { g(); } catch (IOException e) {} } }\n",
        "class A { void f() { try { g(); } catch (Exception e) { log.warn(e); } } }\n",
    ] {
        assert!(added("src/main/java/A.java", java).is_empty(), "{java}");
    }
    assert!(added("src/test/java/ATest.java", java).is_empty());
}

#[test]
fn go_discarded_errors() {
    let base = "package load\n\nfunc Load(p string) (*Config, error) {\n\tc, err := parse(p)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn c, nil\n}\n";
    let swallowed = "package load\n\nfunc Load(p string) (*Config, error) {\n\tc, err := parse(p)\n\t_ = err\n\treturn c, nil\n}\n";
    assert_eq!(modified("load/load.go", base, swallowed), [5]);
    let empty = "package load\n\nfunc Load(p string) {\n\tif err := parse(p); err != nil {\n\t}\n\terr := save(p)\n\tif err != nil {\n\t}\n}\n";
    assert_eq!(added("load/load.go", empty), [7]);
    for code in [
        "package a\n\nfunc f() { _ = w.Close() }\n",
        "package a\n\nfunc f() error {\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n",
    ] {
        assert!(added("a/a.go", code).is_empty(), "{code}");
    }
    assert!(added("load/load_test.go", swallowed).is_empty());
}

#[test]
fn ruby_rescues_of_everything() {
    let rescued = "def load(path)\n  parse(File.read(path))\nrescue => e\nend\n";
    assert_eq!(added("lib/load.rb", rescued), [3]);
    assert_eq!(
        added(
            "lib/load.rb",
            "def load(s)\n  JSON.parse(s) rescue nil\nend\n"
        ),
        [2]
    );
    for code in [
        "def load(path)\n  parse(path)\nrescue => e\n  logger.error(e)\nend\n",
        "def load(path)\n  parse(path)\nrescue Errno::ENOENT\nend\n",
    ] {
        assert!(added("lib/load.rb", code).is_empty(), "{code}");
    }
    assert!(added("spec/load_spec.rb", rescued).is_empty());
}

#[test]
fn an_explained_handler_and_a_promise_s_empty_catch_are_notes_and_bundles_are_not_read() {
    use crate::flag::Severity;
    let severities = |path: &str, new: &str| -> Vec<Severity> {
        run(&[Add(path, new)])
            .flags
            .iter()
            .filter(|f| f.rule == Rule::FailureSwallowed)
            .map(|f| f.severity)
            .collect()
    };
    let silent = "function f() {\n  try {\n    g();\n  } catch {}\n}\n";
    assert_eq!(severities("src/a.js", silent), [Severity::Warning]);
    // Real code, rewritten: a race the comment explains.
    let explained = "function size(p) {\n  try {\n    return statSync(p).size;\n  } catch {\n    // the file can be deleted while the stat is in flight\n  }\n}\n";
    assert_eq!(severities("src/a.js", explained), [Severity::Note]);
    let py = "def f():\n    try:\n        g()\n    except Exception:\n        pass  # best effort: the cache is optional\n";
    assert_eq!(severities("app/cache.py", py), [Severity::Note]);
    let promise = "export function stop(page) {\n  page.close().catch(() => {});\n}\n";
    assert_eq!(severities("src/stop.ts", promise), [Severity::Note]);
    for bundle in [
        "dist/axios.js",
        "packages/x/dist/index.cjs",
        "lib/axios.min.js",
        "vendor/a.js",
    ] {
        assert!(severities(bundle, silent).is_empty(), "{bundle}");
    }
}
