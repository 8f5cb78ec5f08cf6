"""The deploy files as files: the Kubernetes manifests (kubernetes.py), compose, the Containerfile
and its build context, the systemd unit, every image reference naming the binary's version, and
every flag they pass known to the binary."""

import json
import os
import re
import subprocess

import yaml

from .kubernetes import check_kubernetes
from .queries import DASHBOARDS, ROOT, fail, ok

# ---- Kubernetes -------------------------------------------------------------------------------


def check_compose():
    cdir = os.path.join(ROOT, "deploy/compose")
    with open(os.path.join(cdir, "compose.yaml")) as f:
        c = yaml.safe_load(f)
    services = c.get("services", {})
    for s in ("exporter", "prometheus", "alertmanager", "grafana"):
        if s not in services:
            fail(f"compose: service {s} missing")
    named = set(c.get("volumes", {}))
    mounts = {}
    for name, s in services.items():
        if not ("image" in s or "build" in s):
            fail(f"compose: {name} has neither image nor build")
        for v in s.get("volumes", []):
            src, dst = v.split(":")[:2]
            mounts.setdefault(name, {})[dst] = src
            if src.startswith(".") or src.startswith("/"):
                if not os.path.exists(os.path.normpath(os.path.join(cdir, src))):
                    fail(f"compose: {name} mounts {src}, which does not exist")
            elif src not in named:
                fail(f"compose: {name} uses volume {src}, not declared under volumes:")
        for dep in s.get("depends_on", []):
            if dep not in services:
                fail(f"compose: {name} depends on unknown service {dep}")
        for p in s.get("ports", []):
            if not str(p).startswith("127.0.0.1:"):
                fail(f"compose: {name} publishes {p} beyond loopback")
    b = services["exporter"].get("build", {})
    if not os.path.exists(os.path.join(cdir, b.get("context", "."), b.get("dockerfile", "Dockerfile"))):
        fail("compose: exporter build points at a missing Containerfile")
    exp = services["exporter"]
    (ok if exp.get("cap_add") == ["NET_RAW"] and exp.get("cap_drop") == ["ALL"] else fail)(
        "compose: exporter holds NET_RAW only"
    )
    prom = mounts.get("prometheus", {})
    for name in ("reachability_rules.yml", "reachability_alerts.yml"):
        if prom.get(f"/etc/prometheus/{name}") != f"../prometheus/{name}":
            fail(f"compose: Prometheus does not mount the shipped {name}")
    graf = mounts.get("grafana", {})
    with open(os.path.join(cdir, "grafana/provisioning/dashboards/reachability.yml")) as f:
        prov = yaml.safe_load(f)
    path = prov["providers"][0]["options"]["path"]
    if graf.get(path) != "../../dashboards":
        fail(f"compose: Grafana's dashboard provider reads {path}, which is not the mounted dashboards/")
    with open(os.path.join(cdir, "grafana/provisioning/datasources/prometheus.yml")) as f:
        dsp = yaml.safe_load(f)
    if not any(
        d.get("type") == "prometheus" and d.get("isDefault") and "prometheus:9090" in d.get("url", "")
        for d in dsp["datasources"]
    ):
        fail("compose: no default Prometheus datasource pointing at the prometheus service")
    home = services["grafana"].get("environment", {}).get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH", "")
    if home and not os.path.exists(os.path.join(DASHBOARDS, os.path.basename(home))):
        fail(f"compose: Grafana home dashboard {home} does not exist")
    ok(f"compose: {len(services)} services, mounts resolve, rules and dashboards provisioned, ports on 127.0.0.1 only")
    return exp.get("command", [])


# ---- Containerfile and systemd ----------------------------------------------------------------


def check_containerfile():
    path = os.path.join(ROOT, "deploy/container/Containerfile")
    with open(path) as f:
        text = f.read()
    lines = re.sub(r"\\\n", " ", text).splitlines()
    instr = [
        (ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if len(ln.split(None, 1)) > 1 else "")
        for ln in (x.strip() for x in lines)
        if ln and not ln.startswith("#")
    ]
    known = {"ARG", "FROM", "RUN", "WORKDIR", "COPY", "USER", "EXPOSE", "ENTRYPOINT", "CMD", "ENV", "LABEL", "VOLUME"}
    for k, _ in instr:
        if k not in known:
            fail(f"Containerfile: unknown instruction {k}")
    froms = [a for k, a in instr if k == "FROM"]
    stages = {m.group(1) for a in froms for m in [re.search(r"\bAS\s+(\S+)", a, re.I)] if m}
    copies = [a for k, a in instr if k == "COPY" and "--from=" in a]
    checks = [
        (len(froms) >= 2, "multi-stage (build and runtime stages)"),
        (
            all(re.search(r"--from=(\S+)", a).group(1) in stages for a in copies) and copies,
            "COPY --from names a defined stage",
        ),
        (
            any("--static-swift-stdlib" in a and "-c release" in a for k, a in instr if k == "RUN"),
            "release build with --static-swift-stdlib",
        ),
        (
            re.search(r"apt-get install[^&]*\blibssl3\b[^&]*\bca-certificates\b", text.split(froms[-1])[-1])
            is not None,
            "runtime stage installs libssl3 and ca-certificates",
        ),
        (
            [a for k, a in instr if k == "USER"][-1:] != ["root"]
            and [a for k, a in instr if k == "USER"][-1:] != ["0"],
            "runtime user is not root",
        ),
        (all(json.loads(a) for k, a in instr if k in ("ENTRYPOINT", "CMD")), "ENTRYPOINT and CMD in exec (JSON) form"),
    ]
    for good, what in checks:
        (ok if good else fail)(f"Containerfile: {what}")
    # The build context Containerfile.dockerignore lets through must hold a loadable package.
    with open(os.path.join(ROOT, "deploy/container/Containerfile.dockerignore")) as f:
        keep = [w[1:].rstrip("/") for w in f.read().split() if w.startswith("!")]
    with open(os.path.join(ROOT, "Package.swift")) as f:
        manifest = f.read()
    targets = re.findall(r'\.(target|executableTarget|testTarget|systemLibrary)\(name:\s*"([^"]+)"([^)]*)', manifest)
    for kind, name, rest in targets:
        m = re.search(r'path:\s*"([^"]+)"', rest)
        p = m.group(1) if m else ("Tests/" if kind == "testTarget" else "Sources/") + name
        if not any(p == k or p.startswith(k + "/") for k in keep):
            fail(f"Containerfile.dockerignore: keeps {keep}, but target {name} lives in {p}")
    ok(f"Containerfile.dockerignore: context {keep} holds all {len(targets)} targets of Package.swift")
    cmd = [a for k, a in instr if k == "CMD"]
    return json.loads(cmd[-1]) if cmd else []


def check_systemd():
    path = os.path.join(ROOT, "deploy/systemd/reachability_exporter.service")
    settings = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if "=" in line and not line.startswith(("#", ";", "[")):
                k, v = line.split("=", 1)
                settings.setdefault(k, []).append(v)
    want = {
        "DynamicUser": "yes",
        "AmbientCapabilities": "CAP_NET_RAW",
        "CapabilityBoundingSet": "CAP_NET_RAW",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "StateDirectory": "reachability_exporter",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
    }
    for k, v in want.items():
        (ok if settings.get(k) == [v] else fail)(f"systemd: {k}={v}")
    if "PrivateUsers" in settings or "PrivateNetwork" in settings:
        fail("systemd: PrivateUsers/PrivateNetwork would hide the host network from the probes")
    with open(os.path.join(ROOT, "deploy/systemd/reachability_exporter.default")) as f:
        m = re.search(r'^ARGS="([^"]*)"', f.read(), re.M)
    return m.group(1).split() if m else []


CONFIG_PATH = "/etc/reachability_exporter/reachability_exporter.yml"


def check_config_path():
    """One configuration path everywhere a person or a deploy file names it: the Debian
    package's conffile. Any --config.file= or check-config of another /etc path fails."""
    places = ["README.md", "docs", "deploy", "scripts/package-deb"]
    pattern = re.compile(r"(?:--config\.file=|check-config\s+|check --config\.file=)(/etc/\S+?)(?=[\s`\"',)]|$)", re.M)
    seen = {}
    for place in places:
        full = os.path.join(ROOT, place)
        files = [full] if os.path.isfile(full) else [os.path.join(d, n) for d, _, ns in os.walk(full) for n in ns]
        for path in files:
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            for m in pattern.finditer(text):
                seen.setdefault(m.group(1), set()).add(os.path.relpath(path, ROOT))
    # Prometheus's own files (its server, its agent, Alertmanager) are named the same way.
    ours = {
        p: w for p, w in seen.items() if p.startswith("/etc/reachability_exporter") and not p.endswith("/agent.yml")
    }
    others = {p: sorted(w) for p, w in ours.items() if p != CONFIG_PATH}
    if others or CONFIG_PATH not in seen:
        fail(f"configuration path: everything must name {CONFIG_PATH}; found {others or 'it nowhere'}")
    ok(f"configuration path: {CONFIG_PATH} in {len(seen[CONFIG_PATH])} files, no other")


def check_image_references(binary):
    """Every reference to the exporter's image in deploy/ names the version the binary reports
    (whose one source is BuildInfo.version) under the name scripts/release gives its image; no
    image anywhere in deploy/ is :latest; release file names carry the same version."""
    with open(os.path.join(ROOT, "Sources/ReachabilityVerdict/Support/BuildInfo.swift")) as f:
        m = re.search(r'static let version = "([^"]+)"', f.read())
    version = m.group(1) if m else None
    first = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.split("\n")[0]
    m = re.match(r"reachability_exporter, version (\S+) ", first)
    reported = m.group(1) if m else None
    if not version or reported != version:
        fail(f"images: BuildInfo.version is {version!r}, the binary reports {reported!r} (rebuild it)")
        return
    with open(os.path.join(ROOT, "scripts/release")) as f:
        m = re.search(r"^image_name=(\S+)$", f.read(), re.M)
    name = m.group(1) if m else "localhost/reachability_exporter"
    want = f"{name}:{version}"
    # The three deploy files that run it, parsed.
    runs = {}
    for rel, get in (
        ("deploy/kubernetes/daemonset.yaml", lambda d: d["spec"]["template"]["spec"]["containers"][0]["image"]),
        ("deploy/compose/compose.yaml", lambda d: d["services"]["exporter"]["image"]),
        ("deploy/fleet/compose.yaml", lambda d: d["services"]["exporter"]["image"]),
    ):
        with open(os.path.join(ROOT, rel)) as f:
            runs[rel] = get(yaml.safe_load(f))
    wrong = {rel: ref for rel, ref in runs.items() if ref != want}
    (fail if wrong else ok)(f"images: DaemonSet, compose and fleet compose run {want} ({wrong or 'all'})")
    # Every mention in any file under deploy/: an `image:`, a `-t`/`--tag`, a name:tag in prose,
    # a release file name.
    ours = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*reachability_exporter)(?::([\w][\w.+-]*))?")
    tagged_use = re.compile(
        r"(?:\bimage:\s*|\s(?:-t|--tag)[\s=]+)[\"']?((?:[\w.-]+/)*reachability_exporter)(?::([\w][\w.+-]*))?"
    )
    release_file = re.compile(r"reachability_exporter-([0-9][\w.+~-]*?)\.linux-[a-z0-9_]+")
    bad, count = [], 0
    for d, _, files in os.walk(os.path.join(ROOT, "deploy")):
        for n in sorted(files):
            path = os.path.join(d, n)
            rel = os.path.relpath(path, ROOT)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            for m in re.finditer(r"[\w./-]+:latest\b", text):
                bad.append(f"{rel}: {m.group(0)}")
            for m in tagged_use.finditer(text):
                count += 1
                if f"{m.group(1)}:{m.group(2)}" != want:
                    bad.append(f"{rel}: {m.group(0).strip()}")
            for m in ours.finditer(text):
                if m.group(2) and f"{m.group(1)}:{m.group(2)}" != want:
                    bad.append(f"{rel}: {m.group(0)}")
            for m in release_file.finditer(text):
                if m.group(1) != version:
                    bad.append(f"{rel}: {m.group(0)}")
    (fail if bad or count < len(runs) else ok)(
        f"images: every image reference in deploy/ ({count}) is {want}, none is :latest"
        + (f"; found {sorted(set(bad))}" if bad else "")
    )


def check_flags(binary, arg_sets):
    """Every flag the deploy files pass exists in the binary's --help."""
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10).stdout
    known = set(re.findall(r"--(?:\[no-\])?([a-z][a-z0-9.-]+)", help_text))
    for where, args in arg_sets:
        for a in args:
            name = a[2:].split("=", 1)[0] if a.startswith("--") else None
            if name and name not in known:
                fail(f"{where}: flag --{name} does not exist (reachability_exporter --help)")
    ok(f"flags: every flag in {', '.join(w for w, _ in arg_sets)} is known to the binary")


def check_deploy(binary, rules):
    print("kubernetes:")
    k8s_args = check_kubernetes(rules)
    print("compose:")
    compose_args = check_compose()
    print("container and systemd:")
    cmd_args = check_containerfile()
    unit_args = check_systemd()
    check_config_path()
    print("images:")
    check_image_references(binary)
    check_flags(
        binary,
        [
            ("DaemonSet", k8s_args),
            ("compose", compose_args),
            ("Containerfile CMD", cmd_args),
            ("systemd default ARGS", unit_args),
        ],
    )
