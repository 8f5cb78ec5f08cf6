// Small formatting helpers for rule texts.
{
  // '5m' -> 300, '1h30m' -> 5400 (units ms, s, m, h, d, w, y as in Prometheus).
  seconds(d)::
    local unit = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
    local step(acc, c) =
      if std.member('0123456789', c) then
        if acc.u == '' then acc { n: acc.n * 10 + std.parseInt(c) }
        else acc { total: acc.total + acc.n * unit[acc.u], n: std.parseInt(c), u: '' }
      else acc { u: acc.u + c };
    local end = std.foldl(step, std.stringChars(d), { total: 0, n: 0, u: '' });
    end.total + end.n * unit[end.u],

  // 300 -> '5 minutes', 3600 -> '1 hour', 90 -> '90 seconds'.
  humanize(seconds)::
    local plural(n, what) = '%d %s%s' % [n, what, if n == 1 then '' else 's'];
    if seconds % 86400 == 0 then plural(seconds / 86400, 'day')
    else if seconds % 3600 == 0 then plural(seconds / 3600, 'hour')
    else if seconds % 60 == 0 then plural(seconds / 60, 'minute')
    else plural(seconds, 'second'),

  duration(d):: self.humanize(self.seconds(d)),

  // 0.05 -> '5', 0.995 -> '99.5' (a ratio as a percentage, without float noise).
  percent(ratio):: std.toString(std.floor(ratio * 10000 + 0.5) / 100),

  // 0.5 -> '500ms', 2 -> '2s'.
  shortSeconds(s):: if s < 1 then '%dms' % std.floor(s * 1000 + 0.5) else std.toString(s) + 's',

  // The runbook anchor of an alert: GitHub's slug of a heading that is the alert's name.
  runbookURL(config, alert):: config.runbookURLBase + '#' + std.asciiLower(alert),
}
