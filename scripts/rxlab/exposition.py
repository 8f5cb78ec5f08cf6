"""One scrape of an exporter's /metrics, parsed: samples, verdicts per scope, transitions, fault
locations and path MTUs."""


class Metrics:
    """One scrape, parsed: samples as (name, labels, value)."""

    def __init__(self, text):
        self.samples = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, labels, rest = line, {}, ""
            if "{" in line:
                name, tail = line.split("{", 1)
                body, rest = tail.rsplit("}", 1)
                labels = self._labels(body)
            else:
                name, rest = line.split(" ", 1)
            try:
                self.samples.append((name, labels, float(rest.split()[0])))
            except (ValueError, IndexError):
                pass

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

    def all(self, name, **labels):
        return [(l, v) for n, l, v in self.samples if n == name and all(l.get(k) == w for k, w in labels.items())]

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
