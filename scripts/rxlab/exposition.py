"""The exposition parser, one for every lab and proof: a scrape of /metrics (Prometheus text or
OpenMetrics) as samples, with the readers the labs ask of the exporter's: verdicts per scope,
transitions, fault locations and path MTUs."""


class Exposition:
    """One scrape, parsed: samples as (name, labels, value); comments and lines without a
    numeric value are left out. `text` is what was parsed."""

    def __init__(self, text):
        self.text = text
        self.samples = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            try:
                self.samples.append(self._sample(line))
            except (ValueError, IndexError):
                pass

    @classmethod
    def _sample(cls, line):
        labels = {}
        if "{" in line:
            name, tail = line.split("{", 1)
            body, rest = tail.rsplit("}", 1)
            labels = cls._labels(body)
        else:
            name, rest = line.split(" ", 1)
        return name, labels, float(rest.split()[0])

    @staticmethod
    def _labels(body):
        out, i = {}, 0
        while i < len(body):
            eq = body.index("=", i)
            key = body[i:eq].strip(" ,")
            j, value = eq + 2, []
            while body[j] != '"':
                if body[j] == "\\":
                    j += 1
                    value.append({"n": "\n"}.get(body[j], body[j]))
                else:
                    value.append(body[j])
                j += 1
            out[key] = "".join(value)
            i = j + 1
        return out

    def series(self, name, **labels):
        """[(labels, value)] of the samples named `name` whose labels include `labels`."""
        return [(lab, v) for n, lab, v in self.samples if n == name and all(lab.get(k) == w for k, w in labels.items())]

    all = series

    def value(self, name, **labels):
        found = self.all(name, **labels)
        return found[0][1] if found else None

    def total(self, name, **labels):
        return sum(v for _, v in self.all(name, **labels))

    def verdict(self, scope="overall"):
        """(state, reason) of a scope from reachability_connectivity_info."""
        for labels, _ in self.all("reachability_connectivity_info", scope=scope):
            return labels.get("state"), labels.get("reason", "")
        return None, None

    def transitions(self):
        return self.total("reachability_state_transitions_total")

    def fault(self, scope="overall"):
        """The fault location of a scope from reachability_fault_info (`gateway`, `upstream`,
        `dns`...; "none" when the exporter says so), or None without a series for it."""
        for labels, value in self.all("reachability_fault_info", scope=scope):
            if value == 1:
                return labels.get("location")
        return None

    def mtu(self, host):
        """The measured path MTU to `host` in bytes (reachability_path_mtu_bytes of the probe
        --probe.mtu=HOST, named `mtu:HOST`), or None."""
        return self.value("reachability_path_mtu_bytes", target=f"mtu:{host}")
