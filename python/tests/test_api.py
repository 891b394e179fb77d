"""The Python API against the CLI: same bytes as `dedust normalize`, errors as exceptions."""

import json

import pytest

import dedust
from conftest import ROOT, run, shared

DEMO = str(ROOT / "rules" / "demo.json")


@pytest.fixture(scope="module")
def forum_rules(tmp_path_factory):
    clusters = shared("ubuntuforums/clusters.tsv")
    out = tmp_path_factory.mktemp("rules") / "forum.json"
    run("learn", str(clusters), "-o", str(out))
    return str(out)


@pytest.mark.parametrize("name", ["page-links.txt", "kasztp.txt", "userbait.txt"])
def test_same_bytes_as_the_cli_on_real_url_lists(forum_rules, name):
    path = shared(f"urls/{name}")
    raw = path.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    cli = run("normalize", "-r", forum_rules, "-r", DEMO, str(path)).stdout.split(b"\n")
    assert cli[-1] == b""
    cli.pop()
    assert len(cli) == len(raw)
    n = dedust.Normalizer.from_file([forum_rules, DEMO])
    # Python strings are Unicode: lines that are not UTF-8 cannot be passed (the CLI passes them
    # through); a line with a carriage return is compared as the CLI reads it, without it.
    idx, urls = [], []
    for i, line in enumerate(raw):
        try:
            s = line.decode("utf-8")
        except UnicodeDecodeError:
            continue
        idx.append(i)
        urls.append(s[:-1] if s.endswith("\r") else s)
    assert len(urls) > 0.99 * len(raw)
    many = n.normalize_many(urls)
    assert len(many) == len(urls)
    changed = 0
    for i, u, m in zip(idx, urls, many):
        want = cli[i].decode("utf-8")
        assert m == want, (i, u)
        assert n.normalize(u) == want, (i, u)
        changed += m != u
    hits = sum(1 for u in urls if n.explain(u)[1] is not None)
    print(f"{name}: {len(urls)} URLs, {changed} changed ({hits} by a rule), identical to dedust normalize")
    assert hits > 0


def test_explain_names_the_rule():
    rules = {r["id"]: r for r in json.loads((ROOT / "rules" / "demo.json").read_text())["rules"]}
    n = dedust.Normalizer.from_file(DEMO)
    assert len(n) == len(rules)
    hits = 0
    urls = [
        "https://forum0.example/showthread.php?t=1001&p=61011",
        "https://never-seen.example/showthread.php?t=7",
        "https://example.org/plain",
    ]
    tsv = run("normalize", "--tsv", "-r", DEMO, input="\n".join(urls).encode()).stdout.decode()
    for u, row in zip(urls, tsv.splitlines()):
        _, key, rule = row.split("\t")
        assert n.explain(u) == (key, rule or None), u
        if rule:
            assert rule in rules
            hits += 1
    assert hits == 2
    assert n.explain("not a url") == ("not a url", None)


def test_base_layer_can_be_turned_off():
    n = dedust.Normalizer.from_file(DEMO, base=False)
    assert n.normalize("HTTPS://Example.ORG/a?b=1&a=2") == "HTTPS://Example.ORG/a?b=1&a=2"
    n = dedust.Normalizer.from_file(DEMO)
    assert n.normalize("HTTPS://Example.ORG/a?b=1&a=2") == "https://example.org/a?a=2&b=1"


def test_errors_are_python_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such.json"):
        dedust.Normalizer.from_file(str(tmp_path / "no-such.json"))
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1, "rules": [\n  {"id": 3}\n')
    with pytest.raises(dedust.RuleFileError, match="broken.json") as e:
        dedust.Normalizer.from_file(str(broken))
    assert "line" in str(e.value)
    assert isinstance(e.value, ValueError)
    n = dedust.Normalizer.from_file(DEMO)
    with pytest.raises(TypeError):
        n.normalize(5)
    with pytest.raises(TypeError, match="item 1 is int"):
        n.normalize_many(["http://a.org/", 5])
    # The error names the item even past the first unit of work (4,096 URLs go to a worker at a
    # time); a str, or an iterator that is no sequence, is refused as a whole.
    with pytest.raises(TypeError, match="item 9000 is NoneType"):
        n.normalize_many(["http://a.org/"] * 9000 + [None])
    with pytest.raises(TypeError, match="not a str"):
        n.normalize_many("http://a.org/")
    with pytest.raises(TypeError, match="got generator"):
        n.normalize_many(u for u in ["http://a.org/"])
    with pytest.raises(TypeError):
        dedust.Normalizer.from_file(5)


def test_strings_without_utf8_and_odd_lines_pass_through():
    n = dedust.Normalizer.from_file(DEMO)
    lone = "http://a.org/\ud800"
    assert n.normalize(lone) is lone
    assert n.explain(lone) == (lone, None)
    out = n.normalize_many(["HTTPS://A.org/", lone, "x" * 70_000, ""])
    assert out[0] == "https://a.org/" and out[1] is lone and out[2] == "x" * 70_000 and out[3] == ""
    u = "https://a.org/plain"
    assert n.normalize(u) is u  # unchanged: the same object
    assert n.normalize_many((u,)) == [u]


def test_paths_and_pickling(tmp_path):
    import pathlib
    import pickle

    n = dedust.Normalizer.from_file(pathlib.Path(DEMO))
    assert len(n) == len(dedust.Normalizer.from_file([pathlib.Path(DEMO)]))
    e = pickle.loads(pickle.dumps(dedust.RuleFileError("x.json: line 2: bad")))
    assert isinstance(e, dedust.RuleFileError) and str(e) == "x.json: line 2: bad"
    with pytest.raises(IsADirectoryError):
        dedust.Normalizer.from_file(str(tmp_path))
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"version": 1, "rules": [], "x": "\xe9"}')
    with pytest.raises(dedust.RuleFileError, match="latin1.json"):
        dedust.Normalizer.from_file(str(bad))


def test_learn_gives_the_rules_the_cli_learns(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795478400")
    demo = ROOT / "datasets" / "demo" / "clusters.tsv"
    rows = [l.split("\t") for l in demo.read_text().splitlines()[1:]]
    text = dedust.learn([(c, u) for c, u in rows])
    out = tmp_path / "cli.json"
    run("learn", str(demo), "-o", str(out))  # SOURCE_DATE_EPOCH set above
    got, want = json.loads(text), json.loads(out.read_text())
    assert len(got["rules"]) == len(want["rules"]) > 5
    # The same rules in the same order; only the input's name in `learned.from` differs.
    for g, w in zip(got["rules"], want["rules"]):
        assert g["learned"]["from"] == ["python"]
        g.pop("learned"), w.pop("learned")
        assert g == w
    # A mapping works too, and the file loads into a Normalizer.
    by_cluster = {}
    for c, u in rows:
        by_cluster.setdefault(c, []).append(u)
    assert json.loads(dedust.learn(by_cluster))["rules"] == json.loads(text)["rules"]
    path = tmp_path / "py.json"
    path.write_text(text)
    n = dedust.Normalizer.from_file(path)
    assert n.normalize("http://forum0.example/showthread.php?t=7&sessionid=ab12cd") != (
        "http://forum0.example/showthread.php?t=7&sessionid=ab12cd"
    )


def test_learn_rejects_bad_input():
    with pytest.raises(TypeError, match="cluster, url"):
        dedust.learn([("c1", "https://h.org/a", "extra")])
    with pytest.raises(TypeError):
        dedust.learn([("c1", 5)])
    with pytest.raises(ValueError, match="max_fpr"):
        dedust.learn([], max_fpr=2.0)
    with pytest.raises(ValueError, match="min_support"):
        dedust.learn([], min_support=0)
    with pytest.raises(ValueError, match="priors need validation"):
        dedust.learn([], validate=False, priors=True)
    # Nothing to learn from is an error, as for the CLI.
    for empty in ([], {}, {"c": []}):
        with pytest.raises(ValueError, match="empty input"):
            dedust.learn(empty)
    # A mapping's value is a list of URLs, never a string read letter by letter.
    with pytest.raises(TypeError, match="list of URLs"):
        dedust.learn({"c": "https://h.org/a"})
    with pytest.raises(ValueError, match="empty cluster id"):
        dedust.learn([(" ", "https://h.org/a")])
    # Ids and URLs are trimmed as the TSV reader trims them: `c` and `c ` are one cluster.
    pairs = [("c", "https://h.org/a?sid=1"), ("c ", " https://h.org/a?sid=2")]
    tsv = [("c", "https://h.org/a?sid=1"), ("c", "https://h.org/a?sid=2")]
    assert json.loads(dedust.learn(pairs))["rules"] == json.loads(dedust.learn(tsv))["rules"]
    # The priors alone on a little data (kept while no data refutes them).
    priors = json.loads(dedust.learn([("c", "https://h.org/a")]))["rules"]
    assert priors and all(r["scope"] == "*" for r in priors)
    assert {r["kind"] for r in priors} == {"convention", "drop"}


def test_learn_priors_as_the_cli(tmp_path):
    # One http site: with priors (the default, as `dedust learn`) scheme, `www.` and trailing
    # slash are dedup keys on a host never seen; with priors=False (`--no-priors`), that host is
    # left alone.
    one = {"x": ["http://h.org/a?t=1", "http://h.org/a?t=1&s=9f8e7d61"],
           "y": ["http://h.org/a?t=2", "http://h.org/a?t=2&s=0a1b2c32"]}
    for priors, want in [(True, "https://new.org/x"), (False, "http://www.new.org/x/")]:
        text = dedust.learn(one, priors=priors)
        assert json.loads(text)["validation"].get("priors", False) is priors
        if priors:
            default = json.loads(dedust.learn(one))
            assert default["rules"] == json.loads(text)["rules"]
            assert default["validation"]["priors"] is True
        path = tmp_path / f"priors-{priors}.json"
        path.write_text(text)
        assert dedust.Normalizer.from_file(path).normalize("http://www.new.org/x/") == want


def test_batch_lists_never_show_null_items_to_other_threads():
    # While normalize_many waits without the GIL, another thread may reach the list it is filling
    # (gc.get_objects()); iterating a list with an unset item would crash the interpreter.
    import gc
    import threading

    n = dedust.Normalizer.from_file(DEMO)
    size = 12345
    urls = [f"http://WWW.Example.com/a/{i}?b=1&a=2" for i in range(size)]
    stop = threading.Event()

    def spy():
        while not stop.is_set():
            for o in gc.get_objects():
                if type(o) is list and len(o) == size and o is not urls:
                    for _ in o:
                        pass

    t = threading.Thread(target=spy)
    t.start()
    try:
        for _ in range(40):
            out = n.normalize_many(urls)
    finally:
        stop.set()
        t.join()
    assert out[0] == "https://example.com/a/0?a=2&b=1" and len(out) == size

