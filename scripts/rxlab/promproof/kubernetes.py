"""The Kubernetes manifests of deploy/kubernetes: validated against the subset of the
ServiceMonitor and PrometheusRule CRD schemas they use, the PrometheusRule equal to the shipped
rules and both generated files equal to what generate.py makes (deploy.py runs it)."""

import os
import re
import subprocess
import sys
import tempfile

import yaml

from .queries import ROOT, fail, ok

# ---- Kubernetes -------------------------------------------------------------------------------


STRING, BOOLEAN = {"type": "string"}, {"type": "boolean"}
DURATION = {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"}


def closed(properties, required=None):
    """A JSON schema object that allows only `properties` (and needs the `required` ones)."""
    schema = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = required
    return schema


def ref(name):
    return {"$ref": f"#/$defs/{name}"}


def custom_resource(kind, spec, spec_required, defs=None):
    """The schema of a monitoring.coreos.com/v1 resource of `kind`: its spec closed to `spec`;
    `defs` what its "$ref"s name."""
    schema = closed(
        {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": kind},
            "metadata": {"type": "object", "required": ["name", "namespace"]},
            "spec": closed(spec, spec_required),
        },
        ["apiVersion", "kind", "metadata", "spec"],
    )
    if defs:
        schema["$defs"] = defs
    return schema


SERVICEMONITOR_SCHEMA = custom_resource(
    "ServiceMonitor",
    {
        "jobLabel": STRING,
        "selector": closed({"matchLabels": {"type": "object"}}),
        "namespaceSelector": closed({"matchNames": {"type": "array", "items": STRING}, "any": BOOLEAN}),
        "endpoints": {
            "type": "array",
            "minItems": 1,
            "items": closed(
                {
                    "port": STRING,
                    "path": STRING,
                    "scheme": {"enum": ["http", "https"]},
                    "interval": DURATION,
                    "scrapeTimeout": DURATION,
                    "honorLabels": BOOLEAN,
                    "tlsConfig": closed(
                        {
                            "ca": ref("secretOrConfigMap"),
                            "cert": ref("secretOrConfigMap"),
                            "keySecret": ref("secretKey"),
                            "serverName": STRING,
                            "insecureSkipVerify": BOOLEAN,
                        }
                    ),
                    "basicAuth": closed(
                        {"username": ref("secretKey"), "password": ref("secretKey")}, ["username", "password"]
                    ),
                    "relabelings": ref("relabelings"),
                    "metricRelabelings": ref("relabelings"),
                }
            ),
        },
    },
    ["selector", "endpoints"],
    {
        "secretKey": closed({"name": STRING, "key": STRING, "optional": BOOLEAN}, ["name", "key"]),
        "secretOrConfigMap": closed({"secret": ref("secretKey"), "configMap": ref("secretKey")}),
        "relabelings": {
            "type": "array",
            "items": closed(
                {
                    "action": {
                        "enum": [
                            "replace",
                            "keep",
                            "drop",
                            "labelmap",
                            "labeldrop",
                            "labelkeep",
                            "hashmod",
                            "lowercase",
                            "uppercase",
                        ]
                    },
                    "sourceLabels": {
                        "type": "array",
                        "items": {"type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$"},
                    },
                    "separator": STRING,
                    "targetLabel": STRING,
                    "regex": STRING,
                    "modulus": {"type": "integer"},
                    "replacement": STRING,
                }
            ),
        },
    },
)
PROMETHEUSRULE_SCHEMA = custom_resource(
    "PrometheusRule",
    {
        "groups": {
            "type": "array",
            "items": closed(
                {
                    "name": STRING,
                    "interval": STRING,
                    "limit": {"type": "integer"},
                    "rules": {
                        "type": "array",
                        "items": closed(
                            {
                                "record": STRING,
                                "alert": STRING,
                                "expr": STRING,
                                "for": STRING,
                                "labels": {"type": "object"},
                                "annotations": {"type": "object"},
                            },
                            ["expr"],
                        ),
                    },
                },
                ["name", "rules"],
            ),
        }
    },
    ["groups"],
)


def check_kubernetes(rules):
    k8s = os.path.join(ROOT, "deploy/kubernetes")
    check_generated(k8s)
    docs = manifests(k8s)
    check_sources(docs, rules)
    check_schemas(docs)
    pod = docs["DaemonSet"]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    for good, what in expectations(docs, pod, c):
        (ok if good else fail)(f"kubernetes: {what}")
    check_kustomization(k8s, pod, c, docs["ServiceMonitor"])
    return c["args"]


def check_generated(k8s):
    """Both generated files equal what generate.py makes."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(k8s, "generate.py"), tmp], check=True)
        for f in ("configmap.yaml", "prometheusrule.yaml"):
            with open(os.path.join(tmp, f)) as a, open(os.path.join(k8s, f)) as b:
                if a.read() != b.read():
                    fail(
                        f"kubernetes: {f} is not what generate.py makes from its source; run deploy/kubernetes/generate.py"
                    )


def manifests(k8s):
    """The manifests (all but kustomization.yaml), parsed: {kind: document}."""
    docs = {}
    for f in sorted(os.listdir(k8s)):
        if f.endswith(".yaml") and f != "kustomization.yaml":
            with open(os.path.join(k8s, f)) as fh:
                d = yaml.safe_load(fh)
            docs[d["kind"]] = d
    return docs


def check_sources(docs, rules):
    """The PrometheusRule holds the shipped rules, the ConfigMap the shipped configuration."""
    pr = docs["PrometheusRule"]
    if pr["spec"] != rules:
        fail("kubernetes: PrometheusRule spec differs from deploy/prometheus/reachability_{rules,alerts}.yml")
    else:
        ok(
            "kubernetes: PrometheusRule spec == reachability_rules.yml + reachability_alerts.yml (parsed), "
            "text identical to generate.py's"
        )
    with open(os.path.join(ROOT, "deploy/reachability_exporter.yml")) as fh:
        if yaml.safe_load(docs["ConfigMap"]["data"]["reachability_exporter.yml"]) != yaml.safe_load(fh):
            fail("kubernetes: ConfigMap reachability_exporter.yml differs from deploy/reachability_exporter.yml")


def check_schemas(docs):
    """The ServiceMonitor and the PrometheusRule against the subsets of their CRD schemas."""
    import jsonschema

    for kind, schema in (("ServiceMonitor", SERVICEMONITOR_SCHEMA), ("PrometheusRule", PROMETHEUSRULE_SCHEMA)):
        try:
            jsonschema.validate(docs[kind], schema)
            ok(f"kubernetes: {kind} matches the subset of its CRD schema we use (additional properties refused)")
        except jsonschema.ValidationError as e:
            fail(f"kubernetes: {kind}: {e.message} at {list(e.absolute_path)}")


def expectations(docs, pod, c):
    """What the DaemonSet, the Service and the ServiceMonitor must say, each with its line: a
    table of (holds, what)."""
    ds, svc, sm = docs["DaemonSet"], docs["Service"], docs["ServiceMonitor"]
    sc = c.get("securityContext", {})
    return [
        (pod.get("hostNetwork") is True, "DaemonSet uses hostNetwork"),
        (sc.get("capabilities", {}).get("add") == ["NET_RAW"], "DaemonSet adds NET_RAW only"),
        (sc.get("capabilities", {}).get("drop") == ["ALL"], "DaemonSet drops ALL capabilities"),
        (sc.get("allowPrivilegeEscalation") is False, "DaemonSet forbids privilege escalation"),
        (sc.get("readOnlyRootFilesystem") is True, "DaemonSet has a read-only root file system"),
        (
            ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
            "DaemonSet selector matches its pods",
        ),
        (
            svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
            "Service selects the DaemonSet's pods",
        ),
        (
            sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(),
            "ServiceMonitor selects the Service",
        ),
        (
            all(e["port"] in {p["name"] for p in svc["spec"]["ports"]} for e in sm["spec"]["endpoints"]),
            "ServiceMonitor port names exist on the Service",
        ),
        (
            any(
                r.get("targetLabel") == "job" and r.get("replacement") == "reachability"
                for e in sm["spec"]["endpoints"]
                for r in e.get("relabelings", [])
            ),
            'ServiceMonitor sets job="reachability", as the rules expect',
        ),
        ({p["containerPort"] for p in c["ports"]} == {10361}, "container port is the exporter's 10361"),
        (
            any(m["name"] == "config" for m in c["volumeMounts"])
            and any(
                v.get("configMap", {}).get("name") == docs["ConfigMap"]["metadata"]["name"] for v in pod["volumes"]
            ),
            "DaemonSet mounts the ConfigMap",
        ),
        (
            len({d["metadata"].get("namespace", d["metadata"]["name"]) for d in docs.values()}) == 1,
            "every object in one namespace",
        ),
        (not any("hostPort" in p for p in c["ports"]), "no hostPort (hostNetwork already puts the port on the node)"),
        (
            any(a.startswith("--web.config.file=/etc/reachability_exporter/web/") for a in c["args"])
            and any(
                m["name"] == "web" and m["mountPath"] == "/etc/reachability_exporter/web" for m in c["volumeMounts"]
            ),
            "DaemonSet serves with the web configuration it mounts",
        ),
        (
            all(e.get("scheme") == "https" and "basicAuth" in e for e in sm["spec"]["endpoints"]),
            "ServiceMonitor scrapes over TLS with basic auth",
        ),
        (
            not any("httpGet" in c.get(p, {}) for p in ("livenessProbe", "readinessProbe")),
            "kubelet probes do not ask an endpoint that needs the password",
        ),
    ]


def check_kustomization(k8s, pod, c, sm):
    """kustomization.yaml lists every manifest; its secretGenerator makes every Secret key used,
    from files make-web-secret.sh writes."""
    with open(os.path.join(k8s, "kustomization.yaml")) as fh:
        kz = yaml.safe_load(fh)
    listed = set(kz["resources"])
    present = {f for f in os.listdir(k8s) if f.endswith(".yaml") and f != "kustomization.yaml"}
    (ok if listed == present else fail)(
        f"kubernetes: kustomization lists every manifest ({sorted(listed ^ present) or 'all'})"
    )
    generated = {g["name"]: [os.path.basename(f) for f in g["files"]] for g in kz.get("secretGenerator", [])}
    web_secret = next(v["secret"]["secretName"] for v in pod["volumes"] if v["name"] == "web")
    web_config = next(a.split("/")[-1] for a in c["args"] if a.startswith("--web.config.file="))
    refs = {
        (r["name"], r["key"])
        for e in sm["spec"]["endpoints"]
        for r in (e["basicAuth"]["username"], e["basicAuth"]["password"], e["tlsConfig"]["ca"]["secret"])
    }
    (ok if web_config in generated.get(web_secret, []) and all(k in generated.get(n, []) for n, k in refs) else fail)(
        f"kubernetes: the secretGenerator makes every Secret key the DaemonSet and ServiceMonitor use ({sorted(refs)})"
    )
    with open(os.path.join(k8s, "make-web-secret.sh")) as fh:
        script = fh.read()
    made = set(re.findall(r"(?:>|-out |-keyout )([a-z.\-]+)", script))
    wanted = {f for files in generated.values() for f in files}
    (ok if {os.path.basename(f) for f in wanted} <= made else fail)(
        f"kubernetes: make-web-secret.sh writes every generated file ({sorted(wanted - made) or 'all'})"
    )


# ---- compose ----------------------------------------------------------------------------------
