// Forwarding shim for libyaml (Debian libyaml-dev). No logic lives here.
//
// The YAML module drives libyaml's event parser (yaml_parser_parse) and composes the events
// into nodes in Swift; everything it needs (the parser, event and mark structs, the enums)
// imports directly, so nothing is forwarded.
#ifndef CYAML_H
#define CYAML_H

#include <yaml.h>

#endif
