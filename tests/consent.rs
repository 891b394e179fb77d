//! No site speaks for another: every command that reads rule files (`normalize`, `merge`,
//! `export`, `validate`, `learn --cross-host-candidates/--cross-host-decided`) drops a rule that
//! moves URLs to another host or path prefix without that site's consent, with a counted warning
//! (and exit 3 under `--strict`), and keeps the same rule when it carries consent; `merge` pools
//! cross-host evidence within one job only and refuses files learned with different Public
//! Suffix Lists.

mod common;
use common::*;
use dedust::rules::{Rule, RuleKind, Source, Target};

const WARNING: &str =
    "dropped 1 rules that move URLs to another host or path prefix without that site's consent";

/// A rule file holding `victim.com` → `evil.com` (with `consent`), and a drop of `sid` on
/// `victim.com` (so the file is never empty).
fn alias_file(consent: Option<dedust::Consent>) -> String {
    let mut alias = Rule::new(
        RuleKind::Alias,
        Source {
            host: "victim.com".into(),
            scheme: Some("http".into()),
            ..Source::everywhere()
        },
        Target {
            host: Some("evil.com".into()),
            ..Target::unchanged()
        },
    );
    alias.consent = consent;
    let drop = Rule::new(
        RuleKind::Drop,
        Source {
            host: "victim.com".into(),
            optional: vec!["sid".into()],
            ..Source::everywhere()
        },
        Target {
            query: Some(vec![]),
            ..Target::unchanged()
        },
    );
    dedust::RuleFile::new(vec![alias, drop], Default::default(), None).to_json()
}

#[test]
fn an_unconsented_alias_is_dropped_by_every_command_and_a_consented_one_kept() {
    let t = TempDir::new("consent");
    // Truth on which the alias merges only duplicates (so `validate` would keep it).
    let mut truth = String::from("cluster\turl\n");
    for n in 0..6 {
        truth.push_str(&format!(
            "c{n}\thttp://victim.com/p/{n}\nc{n}\thttp://evil.com/p/{n}\n"
        ));
    }
    let truth = t.write("truth.tsv", truth.as_bytes());
    for (name, consent) in [
        ("none", None),
        ("declared", Some(dedust::Consent::Declared(3))),
        ("allowed", Some(dedust::Consent::AllowCrossSite)),
    ] {
        let kept = consent.is_some();
        let rules = t.write(&format!("{name}.json"), alias_file(consent).as_bytes());
        let warned = |o: &std::process::Output, what: &str| {
            let err = stderr(o);
            assert_eq!(
                err.contains(&format!("{rules}: {WARNING}")),
                !kept,
                "{name} {what}: {err}"
            );
        };
        // normalize: the victim's URL stays on its host; --strict says something was left out.
        for strict in [false, true] {
            let mut args = vec!["normalize", "-r", &rules];
            if strict {
                args.push("--strict");
            }
            let o = dedust(&args, b"http://victim.com/a?sid=1\n");
            let want = if kept {
                "http://evil.com/a?sid=1\n"
            } else {
                "http://victim.com/a\n"
            };
            assert_eq!(stdout(&o), want, "{name}");
            assert_eq!(
                o.status.code(),
                Some(if strict && !kept { 3 } else { 0 }),
                "{name}"
            );
            warned(&o, "normalize");
        }
        // merge: the written file holds the alias only with its consent.
        let merged = t.path(&format!("{name}-merged.json"));
        let o = dedust(&["merge", &rules, "-o", &merged], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        warned(&o, "merge");
        let text = std::fs::read_to_string(&merged).unwrap();
        assert_eq!(text.contains("evil.com"), kept, "{name}: {text}");
        assert_eq!(text.contains("\"consent\""), kept, "{name}: {text}");
        // export: no crawler rule sends the victim to the copier.
        let o = dedust(&["export", "-r", &rules, "--to", "nutch"], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        warned(&o, "export");
        assert_eq!(stdout(&o).contains("evil"), kept, "{name}: {}", stdout(&o));
        // validate: the data would support the alias; without consent it is not even judged.
        let out = t.path(&format!("{name}-valid.json"));
        let o = dedust(
            &["validate", "-r", &rules, "--truth", &truth, "-o", &out],
            b"",
        );
        assert!(o.status.success(), "{}", stderr(&o));
        warned(&o, "validate");
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.contains("evil.com"), kept, "{name}: {text}");
    }
}

#[test]
fn every_site_to_one_host_is_never_taken_from_another_shard() {
    let t = TempDir::new("consent-global");
    // `*` → `evil.com`: every site's login page to one site. Consent cannot make it safe.
    let global = |consent| {
        let mut r = Rule::new(
            RuleKind::Alias,
            Source::everywhere(),
            Target {
                host: Some("evil.com".into()),
                ..Target::unchanged()
            },
        );
        r.consent = consent;
        r
    };
    let demo = "datasets/demo/clusters.tsv";
    for consent in [None, Some(dedust::Consent::AllowCrossSite)] {
        let mut f = dedust::RuleFile::new(vec![global(consent)], Default::default(), None);
        f.evidence = vec![global(consent)];
        let r = t.write("global.json", f.to_json().as_bytes());
        for flag in ["--cross-host-decided", "--cross-host-candidates"] {
            let out = t.path("learned.json");
            let o = dedust(&["learn", demo, flag, &r, "-q", "-o", &out], b"");
            assert!(o.status.success(), "{}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains(&format!("{r}: dropped 2 rules that move URLs")),
                "{flag}: {err}"
            );
            let text = std::fs::read_to_string(&out).unwrap();
            assert!(!text.contains("evil.com"), "{flag}: {text}");
            let o = dedust(
                &["learn", demo, flag, &r, "-q", "--strict", "-o", &out],
                b"",
            );
            assert_eq!(o.status.code(), Some(3), "{flag} --strict: {}", stderr(&o));
        }
    }
}

/// Learn the demo set in two shards of job `job` (`--shard --job-id`), returning the files.
fn shards(t: &TempDir, job: &str) -> Vec<String> {
    let text = std::fs::read_to_string("datasets/demo/clusters.tsv").unwrap();
    let mut parts = [
        String::from("cluster\turl\n"),
        String::from("cluster\turl\n"),
    ];
    for l in text.lines().skip(1) {
        let url = l.split('\t').nth(1).unwrap_or("");
        let host = url.split('/').nth(2).unwrap_or("");
        // Whole sites per shard: the demo's sites are `forumN.example` (and `www.` of them).
        let k = host
            .bytes()
            .filter(u8::is_ascii_digit)
            .map(usize::from)
            .sum::<usize>()
            % 2;
        parts[k].push_str(l);
        parts[k].push('\n');
    }
    let mut files = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let input = t.write(&format!("{job}-{i}.tsv"), p.as_bytes());
        let out = t.path(&format!("{job}-{i}.json"));
        let part = i.to_string();
        let o = dedust(
            &[
                "learn",
                &input,
                "-q",
                "--shard",
                "--job-id",
                job,
                "--partition",
                &part,
                "-o",
                &out,
            ],
            b"",
        );
        assert!(o.status.success(), "{}", stderr(&o));
        files.push(out);
    }
    files
}

#[test]
fn merge_pools_evidence_within_one_job_and_one_suffix_list() {
    let t = TempDir::new("consent-jobs");
    let files = shards(&t, "crawl-1");
    let first: dedust::RuleFile = dedust::RuleFile::read(&files[0]).unwrap();
    assert_eq!(
        first.job,
        Some(dedust::rulefile::Job {
            id: "crawl-1".into(),
            partition: Some(0)
        })
    );
    assert_eq!(first.psl.as_deref(), Some(dedust::PSL_VERSION));
    // A corrupt file: invented evidence that `story` (a content parameter no shard saw) is
    // dropped on 50 sites, with the shards' settings.
    let fake = |job: &str| {
        let mut e = Rule::new(
            RuleKind::Drop,
            Source {
                required: vec![("story".into(), dedust::model::ValPat::Any)],
                ..Source::everywhere()
            },
            Target {
                query: Some(vec![]),
                ..Target::unchanged()
            },
        );
        e.clusters = 500;
        e.urls = 1000;
        e.support = Some(500);
        e.fp = Some(0);
        e.fpr = Some(0.0);
        e.supporting = (0..50).map(|i| format!("site{i}.example")).collect();
        e.sites = Some(50);
        let mut f = first.clone();
        f.rules.clear();
        f.exposure = [(dedust::tier::exposure_key(&e).unwrap(), 500)].into();
        f.evidence = vec![e];
        f.job = Some(dedust::rulefile::Job {
            id: job.into(),
            partition: Some(9),
        });
        t.write(&format!("fake-{job}.json"), f.to_json().as_bytes())
    };
    let merged = |inputs: &[&str]| -> (String, String) {
        let out = t.path("m.json");
        let mut args = vec!["merge"];
        args.extend(inputs);
        args.extend(["-o", &out]);
        let o = dedust(&args, b"");
        assert!(o.status.success(), "{}", stderr(&o));
        (std::fs::read_to_string(&out).unwrap(), stderr(&o))
    };
    let keeps_story = |text: &str| {
        let f = dedust::RuleFile::parse(text, "m.json").unwrap();
        let n = dedust::Normalizer::new(f.rules, None);
        n.normalize("https://unseen.example/news?story=42")
            .unwrap()
            .url
            .contains("story")
    };
    let (a, b) = (files[0].as_str(), files[1].as_str());
    let (honest, _) = merged(&[a, b]);
    assert!(keeps_story(&honest), "the shards keep `story`");
    // In the same job the invented evidence would decide (what the job id guards against) …
    let (inside, _) = merged(&[a, b, &fake("crawl-1")]);
    assert!(
        !keeps_story(&inside),
        "the fake evidence is pooled in one job"
    );
    // … from another job, or none, it is ignored (noted), and the shards' file is unchanged.
    let other = fake("crawl-2");
    let (outside, err) = merged(&[a, &other, b]);
    assert!(keeps_story(&outside));
    assert!(
        err.contains(&format!("dedust: note: {other} is of job crawl-2 while the pooled files are of job crawl-1: its 1 cross-host evidence entries were ignored")),
        "{err}"
    );
    let rules =
        |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap()["rules"].take();
    assert_eq!(rules(&outside), rules(&honest));
    let mut none: dedust::RuleFile = dedust::RuleFile::read(&other).unwrap();
    none.job = None;
    let none = t.write("fake-none.json", none.to_json().as_bytes());
    let (outside, err) = merged(&[a, b, &none]);
    assert!(keeps_story(&outside));
    assert!(err.contains("of no job"), "{err}");
    // The merged file names the job and the list.
    let v: serde_json::Value = serde_json::from_str(&honest).unwrap();
    assert_eq!(v["job"]["id"], "crawl-1");
    assert_eq!(v["psl"], dedust::PSL_VERSION);
    // Another Public Suffix List: refused, naming both files.
    let mut old = first.clone();
    old.psl = Some("2.1.1".into());
    let old = t.write("old-psl.json", old.to_json().as_bytes());
    let o = dedust(&["merge", b, &old], b"");
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("old-psl.json") && err.contains("Public Suffix List 2.1.1") && err.contains(b),
        "{err}"
    );
}

/// A CDXJ line: `url` captured with `json` (status, digest, redirect…).
fn cdxj_line(url: &str, json: &str) -> String {
    format!("x 20240101000000 {{\"url\": \"{url}\", \"mime\": \"text/html\", {json}}}\n")
}

/// An institution's two domain names: every page of the old name redirects to the same path
/// on the new one. The old site's own redirects are its consent: `learn` writes the alias,
/// scoped to the old site, with the count of declarations; nothing it learns touches a URL
/// of the new site. The same pages reached by a third site's redirects teach nothing about
/// the target (its paths differ), and pages of two sites sharing digests teach no alias.
#[test]
fn a_sites_own_redirects_to_another_site_are_its_consent() {
    let t = TempDir::new("consent-learned");
    let mut index = String::new();
    for n in 0..12 {
        index += &cdxj_line(
            &format!("https://old.example/page/{n}"),
            &format!(r#""status": "301", "redirect": "https://new.example/page/{n}""#),
        );
        index += &cdxj_line(
            &format!("https://new.example/page/{n}"),
            &format!(
                r#""status": "200", "digest": "N{n}", "length": "{}""#,
                5000 + 37 * n
            ),
        );
        // A third site redirects to other pages of the new site, from other paths.
        index += &cdxj_line(
            &format!("https://other.example/go/{n}"),
            &format!(r#""status": "302", "redirect": "https://new.example/about/{n}""#),
        );
        // Two sites serving one payload: equal content is no consent.
        for host in ["copy.example", "orig.example"] {
            index += &cdxj_line(
                &format!("https://{host}/a/{n}"),
                &format!(r#""status": "200", "digest": "C{n}", "length": "900""#),
            );
        }
    }
    let input = t.write("i.cdxj", index.as_bytes());
    let out = t.path("r.json");
    let o = dedust(&["learn", &input, "-o", &out], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let file = dedust::RuleFile::read(&out).unwrap();
    let moves: Vec<&Rule> = file
        .rules
        .iter()
        .filter(|r| dedust_core::site_move(r).is_some())
        .collect();
    assert_eq!(moves.len(), 1, "{:#?}", file.rules);
    assert_eq!(moves[0].source.host, "old.example");
    assert_eq!(moves[0].target, "https://new.example{/path}{?query}");
    assert_eq!(moves[0].consent, Some(dedust::Consent::Declared(12)));
    let got = normalize_with(
        &out,
        &[
            "https://old.example/page/77",
            "https://new.example/page/3",
            "https://other.example/go/3",
            "https://copy.example/a/3",
        ],
    );
    assert_eq!(
        got,
        [
            "https://new.example/page/77",
            "https://new.example/page/3",
            "https://other.example/go/3",
            "https://copy.example/a/3",
        ]
    );
}
