// A YAML emitter for rule files, so the generated file reads like a hand-written one: keys in
// the order Prometheus documents them, `|` blocks for multi-line expressions, `>-` folding for
// long texts (yamllint's line length), plain scalars where they cannot be mistaken for anything
// else, JSON-quoted strings otherwise (JSON strings are YAML). std.manifestYamlDoc sorts keys
// and writes every long text on one line.
local keyOrder = ['name', 'interval', 'limit', 'rules', 'record', 'alert', 'expr', 'for', 'labels', 'annotations', 'summary', 'description', 'runbook_url'];
local width = 110;  // folded lines
local foldAbove = 160;  // texts longer than this are folded
// std.findSubstr is slow in the C++ jsonnet (0.1 s for a long text); std.strReplace is native.
local has(s, sub) = std.strReplace(s, sub, '') != s;
local all(xs) = std.foldl(function(a, b) a && b, xs, true);  // std.all is newer than Debian's jsonnet 0.18

local rank(k) = local i = std.find(k, keyOrder); if i == [] then std.length(keyOrder) else i[0];
// std.sort is stable: keys of the same rank stay in objectFields' (alphabetical) order.
local orderedKeys(o) = std.sort(std.objectFields(o), rank);

// A plain scalar in block context: starts with a letter, `_` or `(` (no indicator, no number),
// holds no `: `, ` #`, tab, newline or quote-like start, does not end in `:` or a space.
local firstChars = std.stringChars('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_(');
local reserved = ['true', 'false', 'yes', 'no', 'on', 'off', 'null', 'y', 'n'];
local isPlain(s) =
  s != '' && std.member(firstChars, s[0]) && !std.member(reserved, std.asciiLower(s))
  && !has(s, ': ') && !has(s, ' #') && !has(s, '\t') && !has(s, '\n')
  && !std.member(': ', s[std.length(s) - 1]);

// Words folded into lines of at most `width` characters (a `>-` block joins them with spaces).
local fold(s) =
  local step(lines, w) =
    local last = lines[std.length(lines) - 1];
    if last == '' then lines[:std.length(lines) - 1] + [w]
    else if std.length(last) + 1 + std.length(w) > width then lines + [w]
    else lines[:std.length(lines) - 1] + [last + ' ' + w];
  std.foldl(step, std.split(s, ' '), ['']);

local foldable(s) =
  std.length(s) > foldAbove && !has(s, '\n') && !has(s, '  ')
  && !has(s, '\t') && s[0] != ' ' && s[std.length(s) - 1] != ' ';

local literal(s) =
  // A `|` block: every line kept as it is; needs a first line that does not start with a space
  // and no trailing blanks (yamllint).
  local body = if std.endsWith(s, '\n') then std.substr(s, 0, std.length(s) - 1) else s;
  local lines = std.split(body, '\n');
  std.length(lines) > 1 && s[0] != ' ' && !std.endsWith(body, '\n')
  && all([l == std.rstripChars(l, ' ') for l in lines]);

local scalar(s, pad) =
  if std.isString(s) then
    if has(s, '\n') && literal(s) then
      local body = if std.endsWith(s, '\n') then std.substr(s, 0, std.length(s) - 1) else s;
      (if std.endsWith(s, '\n') then '|' else '|-') + std.join('', ['\n' + (if l == '' then '' else pad + l) for l in std.split(body, '\n')])
    else if foldable(s) then '>-' + std.join('', ['\n' + pad + l for l in fold(s)])
    else if isPlain(s) then s
    else if !has(s, '\n') && !has(s, '\t') && !has(s, '\r') then
      // What std.escapeStringJson would write for these, without its cost (it is not native).
      '"' + std.strReplace(std.strReplace(s, '\\', '\\\\'), '"', '\\"') + '"'
    else std.escapeStringJson(s)
  else if std.isBoolean(s) then (if s then 'true' else 'false')
  else if s == null then 'null'
  else std.toString(s);

local isCollection(v) = (std.isObject(v) && std.length(v) > 0) || (std.isArray(v) && std.length(v) > 0);

local value(v, indent) =
  local pad = std.repeat(' ', indent);
  if std.isObject(v) then
    if std.length(v) == 0 then '{}'
    else std.join('\n', [
      local x = v[k];
      pad + (if isPlain(k) then k else std.escapeStringJson(k)) + ':'
      + (if isCollection(x) then '\n' + value(x, indent + 2) else ' ' + value(x, indent + 2))
      for k in orderedKeys(v)
    ])
  else if std.isArray(v) then
    if std.length(v) == 0 then '[]'
    else std.join('\n', [
      // `- ` then the item as if indented by two more, its first line's padding replaced.
      local item = if isCollection(x) then value(x, indent + 2) else pad + '  ' + value(x, indent + 2);
      pad + '- ' + std.substr(item, indent + 2, std.length(item))
      for x in v
    ])
  else scalar(v, std.repeat(' ', indent));

{
  // One YAML document (no `---`), ending in a newline.
  manifest(v):: value(v, 0) + '\n',
}
