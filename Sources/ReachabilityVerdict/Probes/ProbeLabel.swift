/// One constant label of a probe, exported on `reachability_probe_labels_info`.
package struct ProbeLabel: Sendable, Equatable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
