// libyaml from the system (Debian libyaml-dev): the YAML parser for the configuration files.
#include <yaml.h>
