import Reachability

print("reachability_exporter")
