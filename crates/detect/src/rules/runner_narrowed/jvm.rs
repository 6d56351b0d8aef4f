//! Maven (`pom.xml`) and Gradle (`build.gradle`, `build.gradle.kts`): the tests newly skipped
//! (`<skipTests>true</skipTests>`, `<maven.test.skip>`, `enabled = false` on the test task),
//! their failures newly ignored (`<testFailureIgnore>true</testFailureIgnore>`,
//! `ignoreFailures = true`), or fewer of them run (a new `<exclude>` of Surefire or Failsafe,
//! `<excludedGroups>`, a `<test>` selection; Gradle's `exclude '…'`, `excludeTestsMatching`,
//! `includeTestsMatching`, `excludeTags` in a test task). Each setting the head has and the base
//! had not, by kind and value, is flagged on its line.

use super::{Narrowed, numbered};

/// One narrowing setting: what it does, as the message says it, and the value it names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Setting {
    shown: String,
    does: &'static str,
    line: u32,
}

const SKIPS: &str = "the tests no longer run";
const IGNORES: &str = "a failing test no longer fails the build";
const EXCLUDES: &str = "the tests it names no longer run";
const SELECTS: &str = "only the tests it names run";

fn narrowed(base: Vec<Setting>, head: Vec<Setting>, file: &str) -> Vec<Narrowed> {
    let mut had = base;
    let mut out = Vec::new();
    for s in head {
        if let Some(i) = had.iter().position(|b| b.shown == s.shown) {
            had.remove(i);
            continue;
        }
        out.push(Narrowed {
            moved_from: None,
            line: Some(s.line),
            message: format!("{file} newly sets `{}`: {}", s.shown, s.does),
        });
    }
    out
}

pub(super) fn pom(base: &str, head: &str) -> Vec<Narrowed> {
    narrowed(pom_settings(base), pom_settings(head), "`pom.xml`")
}

pub(super) fn gradle(base: &str, head: &str) -> Vec<Narrowed> {
    narrowed(
        gradle_settings(base),
        gradle_settings(head),
        "the Gradle build",
    )
}

/// An element with text and no child: its name, the names of the elements around it (outer
/// first), its text and its line.
struct Leaf<'a> {
    name: &'a str,
    outer: Vec<&'a str>,
    text: &'a str,
    line: u32,
}

/// The leaf elements of an XML text, read leniently: comments, processing instructions and
/// CDATA are passed over, attributes ignored, a malformed tag ends the reading.
fn leaves(text: &str) -> Vec<Leaf<'_>> {
    let mut out = Vec::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut i = 0;
    // The line of a tag, counted on from the last one's: the tags come in order.
    let (mut counted, mut line) = (0usize, 1u32);
    let mut line_at = |at: usize| {
        let newlines = text[counted..at].matches('\n').count();
        line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        counted = at;
        line
    };
    while let Some(open) = text[i..].find('<').map(|o| o + i) {
        let rest = &text[open..];
        let skip_to = |end: &str| rest.find(end).map(|e| open + e + end.len());
        let next = if rest.starts_with("<!--") {
            skip_to("-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if rest.starts_with("<?") || rest.starts_with("<!") {
            skip_to(">")
        } else {
            let Some(close) = rest.find('>') else { break };
            let tag = &rest[1..close];
            let after = open + close + 1;
            if let Some(name) = tag.strip_prefix('/') {
                let name = name.trim();
                if let Some(p) = stack.iter().rposition(|n| *n == name) {
                    stack.truncate(p);
                }
            } else if !tag.ends_with('/') {
                let name = tag.split_whitespace().next().unwrap_or_default();
                // A leaf: text up to its own closing tag.
                let body_end = text[after..].find('<').map_or(text.len(), |e| after + e);
                if text[body_end..].starts_with(&format!("</{name}>")) {
                    out.push(Leaf {
                        name,
                        outer: stack.clone(),
                        text: text[after..body_end].trim(),
                        line: line_at(open),
                    });
                }
                stack.push(name);
            }
            Some(after)
        };
        let Some(next) = next else { break };
        i = next;
    }
    out
}

fn pom_settings(text: &str) -> Vec<Setting> {
    let mut out = Vec::new();
    // The plugin each leaf is configured under, by the artifactId of its `<plugin>`.
    let mut plugin = String::new();
    for leaf in leaves(text) {
        let parent = leaf.outer.last().copied().unwrap_or_default();
        if leaf.name == "artifactId" && parent == "plugin" {
            leaf.text.clone_into(&mut plugin);
            continue;
        }
        if !leaf.outer.contains(&"plugin") && leaf.outer.last() != Some(&"properties") {
            continue;
        }
        let tests_plugin = leaf.outer.contains(&"plugin")
            && (plugin.contains("surefire") || plugin.contains("failsafe"));
        let is_true = leaf.text.eq_ignore_ascii_case("true");
        let does = match leaf.name {
            "skipTests" | "maven.test.skip" | "skipITs" | "maven.test.skip.exec" if is_true => {
                Some(SKIPS)
            }
            "skip" | "skipExec" if is_true && tests_plugin => Some(SKIPS),
            "testFailureIgnore" | "maven.test.failure.ignore" if is_true => Some(IGNORES),
            "exclude" | "excludedGroups" if tests_plugin && !leaf.text.is_empty() => Some(EXCLUDES),
            "test" | "groups" | "it.test" if tests_plugin && !leaf.text.is_empty() => Some(SELECTS),
            _ => None,
        };
        if let Some(does) = does {
            out.push(Setting {
                shown: format!("<{0}>{1}</{0}>", leaf.name, leaf.text),
                does,
                line: leaf.line,
            });
        }
    }
    out
}

/// Gradle, Groovy or Kotlin: the settings inside a block about tests (`test { … }`,
/// `tasks.test { … }`, `tasks.withType(Test) { … }`, `tasks.named<Test>("test") { … }`, a
/// `filter { … }` in one), and those written on the task (`test.ignoreFailures = true`).
fn gradle_settings(text: &str) -> Vec<Setting> {
    let mut out = Vec::new();
    // The headers of the blocks open at each line.
    let mut blocks: Vec<String> = Vec::new();
    for (n, raw) in numbered(text) {
        let code = raw.split("//").next().unwrap_or(raw).trim();
        let in_test = blocks.iter().any(|h| about_tests(h)) || code.starts_with("test.");
        if in_test && let Some((shown, does)) = gradle_setting(code) {
            out.push(Setting {
                shown,
                does,
                line: n,
            });
        }
        for (i, c) in code.char_indices() {
            match c {
                '{' => blocks.push(code[..i].trim().to_owned()),
                '}' => {
                    blocks.pop();
                }
                _ => {}
            }
        }
    }
    out
}

/// A block header that configures test tasks.
fn about_tests(header: &str) -> bool {
    let words: Vec<&str> = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .any(|w| matches!(*w, "test" | "Test" | "integrationTest" | "filter"))
}

/// One line of a test block that narrows the run.
fn gradle_setting(code: &str) -> Option<(String, &'static str)> {
    let code = code.strip_prefix("test.").unwrap_or(code);
    let squeezed: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    let is = |key: &str, value: &str| {
        let rest = squeezed.strip_prefix(key)?.trim_start();
        let rest = rest.strip_prefix('=').unwrap_or(rest).trim();
        let rest = rest
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or(rest);
        (rest == value).then_some(())
    };
    if is("ignoreFailures", "true").is_some() || is("isIgnoreFailures", "true").is_some() {
        return Some((squeezed.clone(), IGNORES));
    }
    if is("enabled", "false").is_some()
        || is("isEnabled", "false").is_some()
        || squeezed.replace(' ', "") == "onlyIf{false}"
    {
        return Some((squeezed.clone(), SKIPS));
    }
    let word = squeezed
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or_default();
    let rest = &squeezed[word.len()..];
    // A pattern, not `exclude group: …` (a dependency's exclusion).
    let quoted = rest
        .trim_start()
        .trim_start_matches('(')
        .trim_start()
        .starts_with(['"', '\'']);
    match word {
        "exclude"
        | "excludeTestsMatching"
        | "excludeTags"
        | "excludeCategories"
        | "excludeEngines"
            if quoted =>
        {
            Some((squeezed.clone(), EXCLUDES))
        }
        "includeTestsMatching" | "includeTags" | "includeCategories" if quoted => {
            Some((squeezed.clone(), SELECTS))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, lines, messages, run};

    const POM: &str = "<project>\n  <properties>\n    <java.version>17</java.version>\n  </properties>\n  <build>\n    <plugins>\n      <plugin>\n        <groupId>org.apache.maven.plugins</groupId>\n        <artifactId>maven-surefire-plugin</artifactId>\n        <version>3.2.5</version>\n      </plugin>\n      <plugin>\n        <artifactId>maven-resources-plugin</artifactId>\n        <configuration>\n          <skip>false</skip>\n        </configuration>\n      </plugin>\n    </plugins>\n  </build>\n</project>\n";

    fn pom(new: &str) -> Vec<u32> {
        lines(&run(&[Modify("pom.xml", POM, new)]), Rule::RunnerNarrowed)
    }

    #[test]
    fn maven_skips_ignores_and_excludes() {
        let configured = |config: &str| {
            POM.replace(
                "        <version>3.2.5</version>\n",
                &format!("        <version>3.2.5</version>\n        <configuration>\n{config}        </configuration>\n"),
            )
        };
        assert_eq!(
            pom(&configured(
                "          <testFailureIgnore>true</testFailureIgnore>\n          <excludes><exclude>**/PointTest.java</exclude></excludes>\n"
            )),
            vec![12, 13]
        );
        assert_eq!(
            pom(&configured("          <skipTests>true</skipTests>\n")),
            vec![12]
        );
        assert_eq!(pom(&configured("          <skip>true</skip>\n")), vec![12]);
        assert_eq!(
            pom(&POM.replace(
                "    <java.version>17</java.version>\n",
                "    <java.version>17</java.version>\n    <maven.test.skip>true</maven.test.skip>\n"
            )),
            vec![4]
        );
        assert_eq!(
            messages(
                &run(&[Modify(
                    "pom.xml",
                    POM,
                    &configured("          <excludedGroups>slow</excludedGroups>\n")
                )]),
                Rule::RunnerNarrowed
            ),
            [
                "`pom.xml` newly sets `<excludedGroups>slow</excludedGroups>`: the tests it names no longer run"
            ]
        );
        // Another plugin's `skip`, a setting turned off, more memory, a version bump.
        for new in [
            POM.replace("<skip>false</skip>", "<skip>true</skip>"),
            configured(
                "          <skipTests>false</skipTests>\n          <argLine>-Xmx2g</argLine>\n",
            ),
            POM.replace("3.2.5", "3.3.0"),
            POM.replace("<!-- x -->", ""),
        ] {
            assert!(pom(&new).is_empty(), "{new}");
        }
        // Kept from the base, or moved.
        let base = configured("          <excludes><exclude>**/Slow*.java</exclude></excludes>\n");
        let moved = base.replace(
            "          <excludes><exclude>**/Slow*.java</exclude></excludes>\n",
            "          <excludes>\n            <exclude>**/Slow*.java</exclude>\n          </excludes>\n",
        );
        assert!(
            lines(
                &run(&[Modify("pom.xml", &base, &moved)]),
                Rule::RunnerNarrowed
            )
            .is_empty()
        );
    }

    #[test]
    fn gradle_ignores_disables_and_excludes_in_test_tasks() {
        let path = "build.gradle";
        let old = "plugins { id 'java' }\n\ntest {\n    useJUnitPlatform()\n}\n\ndependencies {\n    implementation('x:y:1') {\n        exclude group: 'z'\n    }\n}\n";
        let flagged = |new: &str| lines(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed);
        assert_eq!(
            flagged(&old.replace(
                "    useJUnitPlatform()\n",
                "    useJUnitPlatform()\n    ignoreFailures = true\n    exclude \"**/WordsTest*\"\n"
            )),
            vec![5, 6]
        );
        assert_eq!(
            flagged(&old.replace(
                "    useJUnitPlatform()\n",
                "    useJUnitPlatform()\n    filter {\n        excludeTestsMatching \"*Slow*\"\n    }\n"
            )),
            vec![6]
        );
        assert_eq!(flagged(&format!("{old}test.enabled = false\n")), vec![12]);
        let kts = "tasks.test {\n    useJUnitPlatform()\n}\n";
        assert_eq!(
            lines(
                &run(&[Modify(
                    "build.gradle.kts",
                    kts,
                    &kts.replace("()\n", "()\n    isIgnoreFailures = true\n")
                )]),
                Rule::RunnerNarrowed
            ),
            vec![3]
        );
        // A dependency's exclusion, a setting outside test tasks, more logging.
        for new in [
            old.replace(
                "exclude group: 'z'",
                "exclude group: 'z'\n        exclude group: 'w'",
            ),
            format!("{old}\njar {{\n    exclude 'META-INF/*.SF'\n    enabled = false\n}}\n"),
            old.replace(
                "    useJUnitPlatform()\n",
                "    useJUnitPlatform()\n    testLogging { events 'failed' }\n",
            ),
        ] {
            assert!(flagged(&new).is_empty(), "{new}");
        }
    }
}
