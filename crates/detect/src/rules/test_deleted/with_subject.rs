//! `test-deleted` on test files that leave with what they test, or move: a spec deleted with
//! the production module it imports, a test file renamed with most of its tests, a suite
//! moved to another kind of test directory. Each beside the positive it must not hide.

use super::tests::deleted;
use crate::testing::Spec::*;

const MIGRATION: &str = "import { Knex } from 'knex'\n\nexport async function up(knex: Knex) {\n  await knex.schema.alterTable('users', (t) => {\n    t.string('nickname')\n  })\n}\n\nexport async function down(knex: Knex) {\n  await knex.schema.alterTable('users', (t) => {\n    t.dropColumn('nickname')\n  })\n}\n";
const MIGRATION_SPEC: &str = "import * as migration from '../20230101_add_nickname'\nimport { db } from '../../../test/db'\n\ndescribe('20230101_add_nickname', () => {\n  it('adds the column', async () => {\n    await migration.up(db)\n    expect(await db.schema.hasColumn('users', 'nickname')).toBe(true)\n  })\n  it('drops the column', async () => {\n    await migration.down(db)\n    expect(await db.schema.hasColumn('users', 'nickname')).toBe(false)\n  })\n})\n";

#[test]
fn a_spec_deleted_with_the_module_it_imports() {
    let flags = deleted(&[
        Delete("src/migrations/20230101_add_nickname.ts", MIGRATION),
        Delete(
            "src/migrations/__tests__/20230101_add_nickname.spec.ts",
            MIGRATION_SPEC,
        ),
        Keep("test/db.ts", "export const db = connect()\n"),
    ]);
    assert!(flags.is_empty(), "{flags:?}");
    // The module kept: the spec is deleted.
    let flags = deleted(&[
        Keep("src/migrations/20230101_add_nickname.ts", MIGRATION),
        Delete(
            "src/migrations/__tests__/20230101_add_nickname.spec.ts",
            MIGRATION_SPEC,
        ),
    ]);
    assert_eq!(flags.len(), 1);
    // Another module it imports is still there: what it tested may be too.
    let spec = MIGRATION_SPEC.replace(
        "import { db } from '../../../test/db'\n",
        "import { db } from '../../../test/db'\nimport { columns } from '../../schema'\n",
    );
    let flags = deleted(&[
        Delete("src/migrations/20230101_add_nickname.ts", MIGRATION),
        Delete(
            "src/migrations/__tests__/20230101_add_nickname.spec.ts",
            &spec,
        ),
        Keep("src/schema.ts", "export function columns() {}\n"),
    ]);
    assert_eq!(flags.len(), 1);
}

#[test]
fn a_python_test_module_deleted_with_its_module() {
    let module = "def forwards(apps, schema_editor):\n    Book = apps.get_model('shelf', 'Book')\n    Book.objects.update(isbn=normalize)\n";
    let test = "from shelf.migrations import m0007_isbn\n\n\ndef test_forwards_normalizes(apps):\n    m0007_isbn.forwards(apps, None)\n    assert apps.get_model('shelf', 'Book').objects.first().isbn == '978-3'\n";
    assert!(
        deleted(&[
            Delete("src/shelf/migrations/m0007_isbn.py", module),
            Delete("tests/migrations/test_m0007_isbn.py", test),
        ])
        .is_empty()
    );
    assert_eq!(
        deleted(&[
            Keep("src/shelf/migrations/m0007_isbn.py", module),
            Delete("tests/migrations/test_m0007_isbn.py", test),
        ])
        .len(),
        1
    );
}

const CALC: &str = "import { add, sub, mul } from '../../src/calc'\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3)\n})\n\ntest('subs', () => {\n  expect(sub(3, 2)).toBe(1)\n})\n\ntest('muls', () => {\n  expect(mul(3, 2)).toBe(6)\n})\n\ntest('muls by zero', () => {\n  expect(mul(3, 0)).toBe(0)\n})\n";

#[test]
fn a_test_file_moved_with_its_tests() {
    let moved = CALC.replace("'../../src/calc'", "'../src/calc'");
    assert!(
        deleted(&[Rename(
            "test/integration/calc.test.ts",
            "test/calc.test.ts",
            CALC,
            &moved
        )])
        .is_empty()
    );
    // To another kind of test directory, as a deletion and an addition: a note says where.
    let flags = deleted(&[
        Delete("test/integration/calc.test.ts", CALC),
        Add("test/unit/calc.test.ts", &moved),
    ]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(flags[0].severity, crate::flag::Severity::Note);
    assert!(flags[0].message.contains("`test/unit/calc.test.ts`"));
    let flags = deleted(&[
        Delete("test/integration/calc.test.ts", CALC),
        Add("e2e/calc.spec.ts", CALC),
    ]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(flags[0].severity, crate::flag::Severity::Note);
    // Moved to a plain test directory, or within its kind: nothing to say.
    assert!(
        deleted(&[
            Delete("test/integration/calc.test.ts", CALC),
            Add("test/calc.test.ts", &moved)
        ])
        .is_empty()
    );
    // A test dropped on the way, whose check is nowhere at the head: deleted.
    let fewer = moved.replace(
        "\ntest('muls by zero', () => {\n  expect(mul(3, 0)).toBe(0)\n})\n",
        "",
    );
    let flags = deleted(&[Rename(
        "test/integration/calc.test.ts",
        "test/calc.test.ts",
        CALC,
        &fewer,
    )]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("`muls by zero`"),
        "{}",
        flags[0].message
    );
}

#[test]
fn unit_tests_in_a_production_file_the_change_deletes() {
    let host = "pub fn host(uri: &str) -> Option<&str> {\n    uri.split('/').nth(2)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn ip4_uri_host() {\n        assert_eq!(host(\"http://127.0.0.1/\"), Some(\"127.0.0.1\"));\n    }\n}\n";
    assert!(deleted(&[Delete("axum-extra/src/extract/host.rs", host)]).is_empty());
    // The tests taken out and the code kept: deleted.
    let kept = "pub fn host(uri: &str) -> Option<&str> {\n    uri.split('/').nth(2)\n}\n";
    assert_eq!(
        deleted(&[Modify("axum-extra/src/extract/host.rs", host, kept)]).len(),
        1
    );
}

#[test]
fn functions_in_a_python_file_pytest_does_not_collect() {
    // `typing_checks.py` is read by a type checker; pytest never ran `test_it` in it.
    let checks = "from typing import assert_type\n\n\ndef test_it() -> None:\n    assert_type(raises(ValueError), RaisesContext[ValueError])\n    assert 1\n";
    assert!(deleted(&[Delete("testing/typing_checks.py", checks)]).is_empty());
    assert_eq!(
        deleted(&[Delete("testing/test_typing_checks.py", checks)]).len(),
        1
    );
    // With `python_files` set, the repository says what is collected.
    assert_eq!(
        deleted(&[
            Keep("pytest.ini", "[pytest]\npython_files = *_checks.py\n"),
            Delete("testing/typing_checks.py", checks),
        ])
        .len(),
        1
    );
}

#[test]
fn a_duplicate_test_removed() {
    let base = "describe('res', function () {\n  it('should encode data uri1', function (done) {\n    var app = express()\n    app.use(function (req, res) {\n      res.location('data:text/javascript,export default () => { }').end()\n    })\n    request(app)\n      .get('/')\n      .expect('Location', 'data:text/javascript,export%20default%20()%20=%3E%20%7B%20%7D')\n      .expect(200, done)\n  })\n\n  it('should encode data uri2', function (done) {\n    var app = express()\n    app.use(function (req, res) {\n      res.location('data:text/javascript,export default () => { }').end()\n    })\n    request(app)\n      .get('/')\n      .expect('Location', 'data:text/javascript,export%20default%20()%20=%3E%20%7B%20%7D')\n      .expect(200, done)\n  })\n})\n";
    let head = "describe('res', function () {\n  it('should encode data uri', function (done) {\n    var app = express()\n    app.use(function (req, res) {\n      res.location('data:text/javascript,export default () => { }').end()\n    })\n    request(app)\n      .get('/')\n      .expect('Location', 'data:text/javascript,export%20default%20()%20=%3E%20%7B%20%7D')\n      .expect(200, done)\n  })\n})\n";
    assert!(deleted(&[Modify("test/res.location.js", base, head)]).is_empty());
    // The one left asks for another location: the deleted test was no duplicate.
    let head = head.replace("export%20default", "export+default");
    assert_eq!(
        deleted(&[Modify("test/res.location.js", base, &head)]).len(),
        1
    );
}
