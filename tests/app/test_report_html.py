"""``report.html``: self-contained, escaped, everything of report.md plus the question browser's data."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eval.explain import STAGES
from eval.report.html import browser_json, browser_json_bytes, render_html, write_html
from eval.report.markdown_html import markdown_to_html
from tempbench_core.schema import SHIPPED_CONFIGS

REPO = Path(__file__).resolve().parents[2]
NASTY = '</script><script>alert("x")</script> & <b>\'quoted\'</b> @@JS@@ @@DATA@@'


def blob_of(page: str) -> dict:
    m = re.search(r'<script id="tb-data" type="application/json">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_markdown_subset():
    md = ("# Title\n\n- **data**: `a<b`\n- split: test\n\n## Section & more\n\nSome *text* with `code|x` and <tag>.\n"
          "Second line.\n\n| a | b |\n|:---|---:|\n| x \\| y | 1.0 |\n| `z` | 2 |\n\n![missing](plots/none.png)\n")
    out = markdown_to_html(md)
    assert '<h1 id="title">Title</h1>' in out and '<h2 id="section-more">Section &amp; more</h2>' in out
    assert "<li><strong>data</strong>: <code>a&lt;b</code></li>" in out
    assert "<p>Some *text* with <code>code|x</code> and &lt;tag&gt;. Second line.</p>" in out
    assert '<td class="left">x | y</td><td class="right">1.0</td>' in out
    assert '<td class="left"><code>z</code></td>' in out
    assert "plots/none.png not found" in out and "<tag>" not in out


def test_everything_is_escaped_and_nothing_is_loaded_from_elsewhere():
    data = {"configs": ["oracle"], "stages": list(STAGES), "stageHelp": list(STAGES), "marks": ["", "gold"],
            "strings": [NASTY], "questions": [{"id": NASTY, "q": NASTY, "a": NASTY, "hops": [NASTY], "neg": []}],
            "runs": {"oracle": [None]}}
    page = render_html(f"# Report {NASTY}\n\n{NASTY}\n", data, title=f"t {NASTY}")
    # the data survives the trip exactly, and cannot close the script element
    assert blob_of(page) == data
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<script>alert" not in page and "</script><script>" not in page and "<b>" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;&#x27;quoted&#x27;" in page
    # placeholders inside the data are not expanded again
    assert page.count("function select(") == 1
    # self-contained: no URL of another host, and a policy that forbids any load
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page and "img-src data:" in page


@pytest.mark.parametrize("text", [NASTY, "plain", "é ü 漢字 \U0001f600", "", "line\r\nnext\n"])
def test_the_page_written_from_the_blob_as_bytes_is_the_page(tmp_path, text):
    """``tempbench reproduce`` hands write_html the blob as UTF-8 bytes (never decoded): the same file as
    from the blob, from its text, or render_html's page encoded."""
    data = {"configs": ["oracle"], "stages": list(STAGES), "strings": [text, "x"],
            "questions": [{"id": "q1", "q": text, "a": 1.5, "hops": [text], "neg": []}], "runs": {"oracle": [None]}}
    report = f"# Report {text}\n\n{text}\n"
    page = render_html(report, data, base=tmp_path, title=f"t {text}")
    assert render_html(report, None, base=tmp_path, title=f"t {text}", data_json=browser_json_bytes(data)) == page
    written = set()
    for data_json in (None, browser_json(data), browser_json_bytes(data)):
        target = write_html(tmp_path, report, data, title=f"t {text}", data_json=data_json)
        written.add(target.read_bytes())
    assert written == {page.encode("utf-8")}
    assert blob_of(page) == data


def test_text_that_cannot_be_written_is_an_output_error(tmp_path):
    from tempbench_core.errors import OutputError
    with pytest.raises(OutputError, match="cannot be written as utf-8"):
        write_html(tmp_path, "# \ud800\n", None, data_json=browser_json_bytes(None))
    assert not list(tmp_path.iterdir())


ASSETS = ("page.html", "page.css", "browser.js")


def test_the_page_is_made_of_its_package_data():
    # the template, the style sheet and the script are read from eval/report/assets, each once, in full
    page = render_html("# x\n", None)
    assets = REPO / "eval" / "report" / "assets"
    template = (assets / "page.html").read_text(encoding="utf-8")
    for head in template.split("@@")[0::2]:
        assert head in page
    assert (assets / "page.css").read_text(encoding="utf-8") in page
    assert page.count((assets / "browser.js").read_text(encoding="utf-8")) == 1
    assert sorted(p.name for p in assets.iterdir()) == sorted(ASSETS)


def test_the_page_assets_are_in_the_installed_wheel():
    # CI installs the project as a wheel (`pip install ".[test]"`): its files must include the page's assets
    from importlib.metadata import PackageNotFoundError, files
    try:
        installed = {str(f).replace("\\", "/") for f in files("tempbench-repro") or ()}
    except PackageNotFoundError:
        pytest.skip("tempbench-repro is not installed")
    if "eval/report/html.py" not in installed:
        pytest.skip("an editable install: the wheel's files are checked where it is installed from a wheel (CI)")
    assert {f"eval/report/assets/{name}" for name in ASSETS} <= installed


def run_reproduce(data_root, out, hash_seed: str) -> None:
    """``tempbench reproduce`` in a fresh interpreter with a given ``PYTHONHASHSEED``."""
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "tempbench.cli", "reproduce", "--data", str(data_root), "--out", str(out),
                           "--boot", "20"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def reproduced(small_sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("html-reproduce") / "out"
    run_reproduce(small_sample, out, "0")
    return out


def test_reproduce_writes_the_attribution_and_report_html(reproduced):
    report = (reproduced / "report.md").read_text(encoding="utf-8")
    assert "## Where the gold evidence is lost (SPEC §7)" in report
    assert "![where the gold evidence is lost](plots/attribution.png)" in report
    assert (reproduced / "plots" / "attribution.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (reproduced / "report.html").read_text(encoding="utf-8")
    # every heading and every plot of report.md, the plots inline
    for heading in re.findall(r"^#+ (.*)$", report, re.M):
        assert ">" + html.escape(heading) + "</h" in page
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
    assert len(images) >= 5 and page.count('src="data:image/png;base64,') == len(images)
    blob = blob_of(page)
    assert blob["configs"] == list(SHIPPED_CONFIGS) and blob["stages"] == list(STAGES)
    ids = [q["id"] for q in blob["questions"]]
    for name in SHIPPED_CONFIGS:
        explained = json.loads((reproduced / "explain" / f"{name}.json").read_text(encoding="utf-8"))
        assert list(explained["questions"]) == ids
        assert [[STAGES[s] for s in r["st"]] for r in blob["runs"][name]] == list(explained["questions"].values())
        run_ids = [json.loads(line)["id"] for line in (reproduced / "runs" / f"{name}.jsonl").read_text().splitlines()]
        assert run_ids == ids
        entry = blob["runs"][name][0]
        assert len(entry["p"]) == (3 if name == "hop3_k25" else 2)
        assert all(blob["strings"][e[0]] for e in entry["ev"])


def test_report_html_is_deterministic(reproduced, small_sample, tmp_path):
    again = tmp_path / "again"
    run_reproduce(small_sample, again, "12345")
    # the report records the command that wrote it, --out included: the folders' names aside, the same bytes
    assert ((again / "report.html").read_bytes().replace(str(again).encode(), b"@OUT@")
            == (reproduced / "report.html").read_bytes().replace(str(reproduced).encode(), b"@OUT@"))
    for name in SHIPPED_CONFIGS:
        assert (again / "explain" / f"{name}.json").read_bytes() == (reproduced / "explain" / f"{name}.json").read_bytes()


# -- in a real browser ----------------------------------------------------------------------------

BROWSER_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1440,900")
SCREENSHOT = REPO / "data" / "figures" / "report_html.png"


def _browser_or_skip():
    """Paths of chromium and chromedriver; skip (or fail under TEMPBENCH_REQUIRE_BROWSER=1) without them."""
    required = os.environ.get("TEMPBENCH_REQUIRE_BROWSER") == "1"
    problems = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        problems.append("the selenium package is not installed (pip install '.[test]')")
    binary = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    if binary is None:
        problems.append("no chromium browser on PATH (apt-get install chromium)")
    if driver is None:
        problems.append("no chromedriver on PATH (apt-get install chromium-driver)")
    if problems:
        reason = "browser test of report.html not run: " + "; ".join(problems)
        if required:
            pytest.fail(reason + " (TEMPBENCH_REQUIRE_BROWSER=1)")
        pytest.skip(reason)
    return binary, driver


@pytest.fixture
def browser(tmp_path):
    binary, driver = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in BROWSER_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")  # a fresh profile every time
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver), options=options)
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()


def test_question_browser_in_chromium(browser, reproduced, tmp_path):  # browser first: a skip costs no reproduce
    from selenium.webdriver.support.ui import Select, WebDriverWait

    explained = {name: json.loads((reproduced / "explain" / f"{name}.json").read_text(encoding="utf-8"))["questions"]
                 for name in SHIPPED_CONFIGS}
    questions = {q["id"]: q for q in blob_of((reproduced / "report.html").read_text(encoding="utf-8"))["questions"]}
    browser.get((reproduced / "report.html").resolve().as_uri())
    wait = WebDriverWait(browser, 20)
    # the report tab: tables and every plot decoded from its data: URI
    assert browser.find_element("id", "page-report").is_displayed()
    assert "Where the gold evidence is lost" in browser.find_element("id", "page-report").text
    assert browser.execute_script(
        "return Array.from(document.images).every(function (i) { return i.complete && i.naturalWidth > 0; })")
    assert browser.execute_script("return document.images.length") >= 5
    # nothing was fetched from anywhere
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
    assert not [u for u in fetched if not u.startswith(("data:", "file:"))]

    browser.find_element("id", "tab-browser").click()
    assert browser.find_element("id", "page-browser").is_displayed()
    n = len(questions)
    assert browser.find_element("id", "count").text == f"{n} of {n} questions"

    # a filter a researcher would use: one configuration, 3+hop questions whose second hop has a given stage
    name, stage = next((c, s) for c, s in (("oracle", "capped"), ("hop3_k25", "outranked"), ("oracle", "retrieved"))
                       if any(len(st) > 1 and st[1] == s and questions[q]["cx"] == "3+hop" for q, st in explained[c].items()))
    expected = [q for q, st in explained[name].items() if len(st) > 1 and st[1] == stage and questions[q]["cx"] == "3+hop"]
    Select(browser.find_element("id", "f-config")).select_by_value(name)
    Select(browser.find_element("id", "f-cx")).select_by_value("3+hop")
    Select(browser.find_element("id", "f-stage")).select_by_visible_text(stage)
    Select(browser.find_element("id", "f-hop")).select_by_value("2")
    wait.until(lambda d: d.find_element("id", "count").text == f"{len(expected)} of {n} questions")
    shown = [r.get_attribute("data-qid") for r in browser.find_elements("css selector", "#rows tr")]
    assert shown == expected[: len(shown)] and 0 < len(shown) <= 50

    # click a question: the details of `tempbench show`
    qid = shown[0]
    browser.find_element("css selector", f'#rows tr[data-qid="{qid}"]').click()
    wait.until(lambda d: d.find_element("id", "detail").get_attribute("data-qid") == qid)
    detail = browser.find_element("id", "detail").text
    assert f"question {qid}" in detail and questions[qid]["q"] in detail
    for heading in ("gold chain", "anchor", "pool", "evidence, ranked", "stages in every configuration"):
        assert heading in detail
    chips = [c.text for c in browser.find_elements("css selector", "#detail table")[0].find_elements("css selector", ".chip")]
    assert chips == explained[name][qid]

    # the README's picture is renewed only when asked for: a test never writes into the checkout otherwise
    shot = SCREENSHOT if os.environ.get("TEMPBENCH_UPDATE_FIGURES") == "1" else tmp_path / "report_html.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # free text narrows to one question
    Select(browser.find_element("id", "f-stage")).select_by_value("")
    Select(browser.find_element("id", "f-hop")).select_by_value("")
    browser.find_element("id", "f-text").send_keys(qid)
    wait.until(lambda d: d.find_element("id", "count").text == f"1 of {n} questions")
    # another configuration keeps the question selected and shows its details there
    other = next(c for c in SHIPPED_CONFIGS if c != name)
    Select(browser.find_element("id", "f-config")).select_by_value(other)
    wait.until(lambda d: f"question {qid} ({questions[qid]['split']}), {other}" in d.find_element("id", "detail").text)

    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe


def _state(browser) -> dict:
    """What the browser shows: the filters' values, the count, the selected question, the address's hash."""
    return browser.execute_script(
        "function v(id) { return document.getElementById(id).value; }"
        "return {cfg: v('f-config'), cx: v('f-cx'), op: v('f-op'), hop: v('f-hop'), text: v('f-text'),"
        " stage: (function (s) { return s.value === '' ? '' : s.options[s.selectedIndex].text; })(document.getElementById('f-stage')),"
        " count: document.getElementById('count').textContent, detail: document.getElementById('detail').dataset.qid || null,"
        " selected: Array.from(document.querySelectorAll('#rows tr.selected')).map(function (r) { return r.dataset.qid; }),"
        " browser: !document.getElementById('page-browser').hidden, hash: location.hash};")


def test_links_into_the_browser_in_chromium(browser, reproduced):
    """``report.html#browser&cfg=..&stage=..&q=..`` opens that view; filtering rewrites the address, which reopens it."""
    from selenium.webdriver.support.ui import Select, WebDriverWait

    explained = json.loads((reproduced / "explain" / "stale_blind.json").read_text(encoding="utf-8"))["questions"]
    questions = blob_of((reproduced / "report.html").read_text(encoding="utf-8"))["questions"]
    n = len(questions)
    capped = [q for q, st in explained.items() if "capped" in st]
    assert len(capped) > 50  # the question asked for is on a later page of the list
    qid = capped[-1]
    page = (reproduced / "report.html").resolve().as_uri()
    wait = WebDriverWait(browser, 20)

    browser.get(f"{page}#browser&cfg=stale_blind&stage=capped&q={qid}")
    wait.until(lambda d: _state(d)["detail"] == qid)
    state = _state(browser)
    assert state["browser"] and state["cfg"] == "stale_blind" and state["stage"] == "capped"
    assert state["count"] == f"{len(capped)} of {n} questions" and state["selected"] == [qid]
    assert f"question {qid} " in browser.find_element("id", "detail").text
    assert state["hash"] == f"#browser&cfg=stale_blind&stage=capped&q={qid}"

    # filtering rewrites the address (in place: no history entry per change)
    length = browser.execute_script("return history.length")
    cx = next(q["cx"] for q in questions if q["id"] == qid)
    Select(browser.find_element("id", "f-cx")).select_by_value(cx)
    browser.find_element("id", "f-text").send_keys("q")
    wait.until(lambda d: "text=q" in _state(d)["hash"])
    state = _state(browser)
    assert state["hash"] == f"#browser&cfg=stale_blind&cx={cx}&stage=capped&text=q&q={qid}"
    assert browser.execute_script("return history.length") == length
    expected = sum(1 for q in questions if q["id"] in capped and q["cx"] == cx and "q" in q["id"].lower())
    assert state["count"] == f"{expected} of {n} questions"

    # ... and that address, opened afresh, shows the same view
    shared = browser.current_url
    browser.get("about:blank")
    browser.get(shared)
    wait.until(lambda d: _state(d)["detail"] == qid)
    again = _state(browser)
    assert {k: again[k] for k in ("cfg", "cx", "stage", "text", "count", "selected")} == \
        {"cfg": "stale_blind", "cx": cx, "stage": "capped", "text": "q", "count": state["count"], "selected": [qid]}

    # a link followed inside the page (hashchange) opens its view; unknown values leave the filters alone
    browser.execute_script("location.hash = '#browser&cfg=oracle&stage=no_such_stage&cx=9hop&q=nope'")
    wait.until(lambda d: _state(d)["cfg"] == "oracle")
    state = _state(browser)
    assert state["stage"] == "capped" and state["cx"] == cx
    # the report tab leaves a heading's anchor alone and drops the browser's view from the address
    browser.find_element("id", "tab-report").click()
    assert _state(browser)["hash"] == ""
    browser.get(f"{page}#by-complexity")
    assert not _state(browser)["browser"] and _state(browser)["hash"] == "#by-complexity"

    # the stage chips: one colour per stage of SPEC §7, the plot's, all different
    colours = browser.execute_script(
        "return Array.from(document.querySelectorAll('#legend .chip')).map(function (c) {"
        " return [c.textContent, getComputedStyle(c).backgroundColor]; });")
    from eval.report.plots import stage_colours

    want = {s: "rgb({}, {}, {})".format(*(int(c[i:i + 2], 16) for i in (1, 3, 5))) for s, c in stage_colours().items()}
    assert [name for name, _ in colours] == list(STAGES) and dict(colours) == want
    assert len(set(want.values())) == len(STAGES)
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe
