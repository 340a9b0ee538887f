package SluiceBench::Report;

# What the bench makes of its runs: medians per point, the ratio to
# direct, the floor checks, docs/benchmarks.md, the gnuplot PNGs and the
# summary on stdout (the floor, then one `BENCH {json}` line).
#
# The result hash, as bench.pl builds it:
#   series    [ { id => 'sluice-1/tcp', target => OBJ, transport } ]
#   workloads [ { id => 'point_select/disable', name, script, ps } ]
#   points    { "WORKLOAD|SERIES|THREADS" => { runs => [ sysbench_parse
#               results plus cpu_us_per_query, server_cpu_us_per_query,
#               other_cores, the servers' counts of a causal target
#               (reads_primary, reads_replica, replica_other, backlog),
#               or { error } ] } }, a run's index its round's
#   idle      [ { target, label, conns, rss_before, rss_after,
#                 bytes_per_conn, backend_conns } or { target, error } ]
#   ctx, opt, command, targets

use strict;
use warnings;

use Exporter qw(import);
use JSON::PP ();
use List::Util qw(min max sum);
use POSIX qw(strftime);

use Sluice::Sandbox qw(find_bin);
use SluiceBench::Proc qw(cpu_model mem_total);
use SluiceBench::Util qw(run_capture note);

our @EXPORT_OK = qw(aggregate write_markdown write_plots print_summary);

# The floor sluice is held to (see the issue that asked for this bench).
use constant {
    IDLE_MAX_BYTES   => 16 * 1024,  # worker RSS per idle session
    P95_MAX_RATIO    => 1.10,       # p95 at 1 thread, against direct
    AUTO_TOLERANCE   => 0.05,       # "no regression" within noise
    RWSPLIT_MAX      => 1.30,       # readwritesplit's CPU/query, against
                                    # readconn's (issue 9)
    CACHE_MAX_US     => 6.6,        # the cache's CPU per hit (issue 10)
    CACHE_MIN_RATIO  => 2.0,        # and its QPS against direct
    CAUSAL_MIN_RATIO => 0.95,       # a causal_reads setting's TPS against
                                    # local's, the default's (issue 19)
    REDIS_HIT_MAX    => 2.0,        # a Redis-tier hit's CPU, against a
                                    # zone hit's (issue 22)
    REDIS_ZONE_MAX   => 1.05,       # a zone hit's with cache_redis
};
# --causal: what a setting is compared with, round by round: local with
# the same causal_reads_timeout (causal-global-100ms: causal-local-100ms)
sub _causal_base {
    my ($name) = @_;
    (my $b = $name) =~ s/^causal-(?:off|global)/causal-local/;
    return $b;
}
my @CPU_PAIRS = (['sluice-1', 'haproxy-1'], ['sluice-auto', 'haproxy-auto']);
my @CPU_THREADS = (8, 32);

my %PS_LABEL = (disable => 'text protocol (--db-ps-mode=disable)',
                auto    => 'prepared statements (--db-ps-mode=auto)');

sub median {
    my @v = sort { $a <=> $b } grep { defined } @_;
    return undef unless @v;
    return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

sub _point {
    my ($res, $wl, $sid, $th) = @_;
    return $res->{points}{"$wl|$sid|$th"};
}


# --- medians, ratios, floor --------------------------------------------

sub aggregate {
    my ($res) = @_;
    for my $p (values %{ $res->{points} }) {
        my @ok = grep { !$_->{error} } @{ $p->{runs} };
        $p->{errors} = [ map { $_->{error} } grep { $_->{error} }
                         @{ $p->{runs} } ];
        $p->{n} = @ok;
        next unless @ok;
        for my $k (qw(qps p95_ms cpu_us_per_query server_cpu_us_per_query
                      other_cores)) {
            $p->{$k} = median(map { $_->{$k} } @ok);
        }
        my @q = map { $_->{qps} } @ok;
        $p->{spread} = (max(@q) - min(@q)) / $p->{qps} if @q > 1;
        _aggregate_causal($p, @ok);
    }
    _causal_pairs($res);
    for my $key (keys %{ $res->{points} }) {
        my ($wl, $sid, $th) = split /\|/, $key;
        my ($tr) = $sid =~ m{/(\w+)\z};
        my $d = _point($res, $wl, "direct/$tr", $th);
        my $p = $res->{points}{$key};
        $p->{ratio} = $p->{qps} / $d->{qps}
            if $d && $d->{qps} && defined $p->{qps};
    }
    $res->{floor} = [ floor_checks($res) ];
    my @other = map { $_->{other_cores} // () }
        map { @{ $_->{runs} } } values %{ $res->{points} };
    $res->{other_load} = { median => median(@other), max => max(@other) }
        if @other;
}

# A causal target's runs: the reads each server served and the stale
# reads, summed over the rounds (share: of the sum), the share's range,
# TPS and the replica's backlog, medians.
sub _aggregate_causal {
    my ($p, @ok) = @_;
    $p->{tps} = median(map { $_->{tps} } @ok);
    if (grep { defined $_->{checks} } @ok) {
        for my $k (qw(checks stale)) {
            $p->{$k} = sum(map { $_->{$k} // 0 } @ok);
        }
    }
    my @c = grep { defined $_->{reads_replica} } @ok or return;
    for my $k (qw(reads_primary reads_replica replica_other reads_extra)) {
        $p->{$k} = sum(map { $_->{$k} } @c);
    }
    my $reads = $p->{reads_primary} + $p->{reads_replica};
    $p->{replica_share} = $reads ? $p->{reads_replica} / $reads : undef;
    $p->{replica_other_per_read} = $reads ? $p->{replica_other} / $reads
                                          : undef;
    my @sh = map { $_->{replica_share} // () } @c;
    ($p->{share_min}, $p->{share_max}) = (min(@sh), max(@sh)) if @sh;
    $p->{backlog} = median(map { $_->{backlog} } @c);
    $p->{backlog_max} = max(map { $_->{backlog} // 0 } @c);
}

# The TPS of each causal setting over that of local with the same
# timeout in the same round (the two ran one after the other): median
# and range of the ratios.
sub _causal_pairs {
    my ($res) = @_;
    for my $key (keys %{ $res->{points} }) {
        my ($wl, $sid, $th) = split /\|/, $key;
        my ($name, $tr) = $sid =~ m{^(causal-[^/]+)/(\w+)\z} or next;
        my $base = _causal_base($name);
        next if $base eq $name;
        my $b = _point($res, $wl, "$base/$tr", $th) or next;
        my $p = $res->{points}{$key};
        my @r;
        for my $i (0 .. $#{ $p->{runs} }) {
            my ($x, $y) = ($p->{runs}[$i], $b->{runs}[$i]);
            push @r, $x->{tps} / $y->{tps}
                if $x && $y && !$x->{error} && !$y->{error} && $y->{tps};
        }
        next unless @r;
        $p->{vs_base} = median(@r);
        ($p->{vs_base_min}, $p->{vs_base_max}) = (min(@r), max(@r));
    }
}

sub _check {
    my ($name, $pass, $detail) = @_;
    return { check => $name, pass => $pass, detail => $detail };
}

sub floor_checks {
    my ($res) = @_;
    my @c;
    my @ps = map { $_->{ps} } grep { $_->{name} eq 'point_select' }
             @{ $res->{workloads} };
    for my $ps (@ps) {
        my $wl = "point_select/$ps";
        push @c, _cpu_checks($res, $wl), _auto_check($res, $wl),
                 _scale_checks($res, $wl), _p95_checks($res, $wl),
                 _rwsplit_checks($res, $wl), _cache_checks($res, $wl),
                 _redis_checks($res, $wl);
    }
    push @c, _idle_checks($res), _causal_checks($res);
    return @c;
}

# --causal: causal_reads global lets no stale read through in the web
# mix (the write on one connection, its read on the next), and what each
# setting costs against local's TPS.
sub _causal_checks {
    my ($res) = @_;
    my @c;
    for my $key (sort keys %{ $res->{points} }) {
        my ($wl, $sid, $th) = split /\|/, $key;
        my ($name) = $sid =~ m{^(causal-[^/]+)/tcp\z} or next;
        my $p = $res->{points}{$key};
        my $w = (split m{/}, $wl)[0];
        if ($name =~ /global/ && defined $p->{checks}) {
            push @c, _check("no stale read through $name, $w, $th threads",
                $p->{stale} == 0 ? 1 : 0, sprintf '%d stale of %d reads '
                . 'after a write', $p->{stale}, $p->{checks});
        }
        next unless defined $p->{vs_base};
        push @c, _check(sprintf('TPS %s >= %.2f x %s, %s, %d threads',
            $name, CAUSAL_MIN_RATIO, _causal_base($name), $w, $th),
            $p->{vs_base} >= CAUSAL_MIN_RATIO ? 1 : 0, sprintf
            'x %.3f (rounds x %.3f to x %.3f); reads to the replica %s',
            $p->{vs_base}, $p->{vs_base_min}, $p->{vs_base_max},
            _pct($p->{replica_share}));
    }
    return @c;
}

# readconn's CPU per query at most HAProxy's, same thread budget.
sub _cpu_checks {
    my ($res, $wl) = @_;
    my @c;
    for my $th (@CPU_THREADS) {
        for my $pair (@CPU_PAIRS) {
            my ($s, $h) = @$pair;
            my $name = "CPU/query $s <= $h, $wl, $th threads, tcp";
            my $a = _point($res, $wl, "$s/tcp", $th);
            my $b = _point($res, $wl, "$h/tcp", $th);
            if (!$a || !$b || !defined $a->{cpu_us_per_query}
                || !defined $b->{cpu_us_per_query}) {
                push @c, _check($name, undef, 'not measured');
                next;
            }
            my ($x, $y) = ($a->{cpu_us_per_query}, $b->{cpu_us_per_query});
            push @c, _check($name, $x <= $y ? 1 : 0, sprintf
                '%s %.2f µs, %s %.2f µs (%+.0f %%)', $s, $x, $h, $y,
                ($x / $y - 1) * 100);
        }
    }
    return @c;
}

# readwritesplit parses every statement and keeps two backends per
# session: at most 1.3 times readconn's CPU per query, same workers.
sub _rwsplit_checks {
    my ($res, $wl) = @_;
    my @c;
    for my $th (@CPU_THREADS) {
        for my $w (qw(1 auto)) {
            my ($s, $r) = ("rwsplit-$w", "sluice-$w");
            my $name = sprintf 'CPU/query %s <= %.1f x %s, %s, %d threads, '
                . 'tcp', $s, RWSPLIT_MAX, $r, $wl, $th;
            my $a = _point($res, $wl, "$s/tcp", $th);
            my $b = _point($res, $wl, "$r/tcp", $th);
            if (!$a || !$b || !defined $a->{cpu_us_per_query}
                || !defined $b->{cpu_us_per_query}) {
                push @c, _check($name, undef, 'not measured');
                next;
            }
            my ($x, $y) = ($a->{cpu_us_per_query}, $b->{cpu_us_per_query});
            push @c, _check($name, $x <= RWSPLIT_MAX * $y ? 1 : 0, sprintf
                '%s %.2f µs, %s %.2f µs (x %.2f)', $s, $x, $r, $y, $x / $y);
        }
    }
    return @c;
}

# The query cache at 32 threads, where the anchors were measured: CPU per
# query (all hits once warm) and QPS against the server reached directly.
# Only when the cache targets ran (--cache).
#
# Beside each, what nullserver with as many threads as the cache has
# workers (a server that only reads the query and sends an answer from
# memory) measured in the same run: the host's part, which no proxy goes
# below.
sub _cache_checks {
    my ($res, $wl) = @_;
    my @c;
    my $d = _point($res, $wl, 'direct/tcp', 32);
    for my $w (qw(1 auto)) {
        my $p = _point($res, $wl, "cache-$w/tcp", 32) or next;
        my $n = _point($res, $wl, "null-$w/tcp", 32);
        my $nus = $n ? $n->{cpu_us_per_query} : undef;
        my $us = $p->{cpu_us_per_query};
        my $host = defined $us && defined $nus
            ? sprintf(' (nullserver %.2f µs: sluice\'s own part %.2f µs)',
                      $nus, $us - $nus) : '';
        push @c, _check("CPU/query cache-$w <= " . CACHE_MAX_US . " µs, $wl,"
            . ' 32 threads, tcp', defined $us ? ($us <= CACHE_MAX_US ? 1 : 0)
            : undef, defined $us ? sprintf('%.2f µs', $us) . $host
            : 'not measured');
        my ($q, $dq) = ($p->{qps}, $d ? $d->{qps} : undef);
        $host = $q && $dq && $n && $n->{qps}
            ? sprintf('; nullserver x %.2f', $n->{qps} / $dq) : '';
        push @c, _check("QPS cache-$w >= " . CACHE_MIN_RATIO . " x direct, "
            . "$wl, 32 threads, tcp", $q && $dq
            ? ($q >= CACHE_MIN_RATIO * $dq ? 1 : 0) : undef, $q && $dq
            ? sprintf('%.0f QPS, direct %.0f (x %.2f)', $q, $dq, $q / $dq)
              . $host : 'not measured');
    }
    return @c;
}

# --redis: a Redis-tier hit (strict: every hit is Redis') at most 2 x a
# zone hit's CPU, a zone hit with cache_redis at most 1.05 x one without,
# with the host's floor (nullserver) beside.
sub _redis_checks {
    my ($res, $wl) = @_;
    my $z = _point($res, $wl, 'cache-1/tcp', 32) or return ();
    my $n = _point($res, $wl, 'null-1/tcp', 32);
    my @c;
    for my $t (['redis-strict-1', REDIS_HIT_MAX],
               ['redis-small-1', REDIS_HIT_MAX],
               ['redis-cluster-1', REDIS_HIT_MAX],
               ['zone-redis-1', REDIS_ZONE_MAX],
               ['redis-dead-1', REDIS_ZONE_MAX]) {
        my ($name, $max) = @$t;
        my $p = _point($res, $wl, "$name/tcp", 32) or next;
        my ($x, $y) = ($p->{cpu_us_per_query}, $z->{cpu_us_per_query});
        my $ok = defined $x && defined $y;
        push @c, _check(sprintf('CPU/query %s <= %.2f x cache-1, %s, 32 '
            . 'threads, tcp', $name, $max, $wl), $ok ? ($x <= $max * $y
            ? 1 : 0) : undef, $ok ? sprintf('%.2f µs, cache-1 %.2f µs '
            . '(x %.2f); QPS %.0f%s', $x, $y, $x / $y, $p->{qps} // 0,
            $n && defined $n->{cpu_us_per_query} ? sprintf(
            '; nullserver %.2f µs', $n->{cpu_us_per_query}) : '')
            : 'not measured');
    }
    return @c;
}

# More workers must not cost a lone client anything.
sub _auto_check {
    my ($res, $wl) = @_;
    my $name = "sluice-auto vs sluice-1 at 1 thread, $wl, tcp (QPS within "
        . AUTO_TOLERANCE * 100 . ' %)';
    my $a = _point($res, $wl, 'sluice-auto/tcp', 1);
    my $b = _point($res, $wl, 'sluice-1/tcp', 1);
    return _check($name, undef, 'not measured')
        unless $a && $b && $a->{qps} && $b->{qps};
    my $r = $a->{qps} / $b->{qps};
    return _check($name, $r >= 1 - AUTO_TOLERANCE ? 1 : 0, sprintf
        'auto %.0f QPS (p95 %.3f ms), 1 worker %.0f QPS (p95 %.3f ms): '
        . '%+.1f %%', $a->{qps}, $a->{p95_ms}, $b->{qps}, $b->{p95_ms},
        ($r - 1) * 100);
}

# More workers must buy throughput when many clients are busy.
sub _scale_checks {
    my ($res, $wl) = @_;
    my @c;
    for my $th (32, 128) {
        my $name = "sluice-auto QPS > sluice-1 QPS at $th threads, $wl, tcp";
        my $a = _point($res, $wl, 'sluice-auto/tcp', $th);
        my $b = _point($res, $wl, 'sluice-1/tcp', $th);
        if (!$a || !$b || !$a->{qps} || !$b->{qps}) {
            push @c, _check($name, undef, 'not measured');
            next;
        }
        push @c, _check($name, $a->{qps} > $b->{qps} ? 1 : 0, sprintf
            'auto %.0f QPS, 1 worker %.0f QPS (%+.1f %%)', $a->{qps},
            $b->{qps}, ($a->{qps} / $b->{qps} - 1) * 100);
    }
    return @c;
}

sub _p95_checks {
    my ($res, $wl) = @_;
    my @c;
    my $d = _point($res, $wl, 'direct/tcp', 1);
    for my $s (qw(sluice-1 sluice-auto)) {
        my $name = "p95 at 1 thread $s <= direct + "
            . (P95_MAX_RATIO - 1) * 100 . " %, $wl, tcp";
        my $p = _point($res, $wl, "$s/tcp", 1);
        if (!$p || !$d || !$p->{p95_ms} || !$d->{p95_ms}) {
            push @c, _check($name, undef, 'not measured');
            next;
        }
        my $r = $p->{p95_ms} / $d->{p95_ms};
        push @c, _check($name, $r <= P95_MAX_RATIO ? 1 : 0, sprintf
            '%s %.3f ms, direct %.3f ms (%+.1f %%)', $s, $p->{p95_ms},
            $d->{p95_ms}, ($r - 1) * 100);
    }
    return @c;
}

sub _idle_checks {
    my ($res) = @_;
    my @c;
    for my $i (grep { $_->{target} =~ /^sluice/ } @{ $res->{idle} }) {
        my $name = "idle sessions on $i->{target}: worker RSS <= "
            . IDLE_MAX_BYTES / 1024 . ' KiB each';
        if ($i->{error}) {
            push @c, _check($name, undef, "not measured: $i->{error}");
            next;
        }
        push @c, _check($name,
            $i->{bytes_per_conn} <= IDLE_MAX_BYTES ? 1 : 0, sprintf
            '%.0f bytes (%.1f KiB) per session over %d sessions',
            $i->{bytes_per_conn}, $i->{bytes_per_conn} / 1024,
            $i->{conns});
    }
    return @c;
}

sub _verdict {
    my ($c) = @_;
    return !defined $c->{pass} ? 'SKIP' : $c->{pass} ? 'PASS' : 'FAIL';
}


# --- formatting ------------------------------------------------------------

sub _f {
    my ($v, $fmt) = @_;
    return defined $v ? sprintf($fmt, $v) : '—';
}

sub _pct {
    my ($v) = @_;
    return defined $v ? sprintf('%.1f %%', $v * 100) : '—';
}

sub _bytes {
    my ($b) = @_;
    return '—' unless defined $b;
    return sprintf('%.1f MiB', $b / 1048576) if abs($b) >= 1048576;
    return sprintf('%.1f KiB', $b / 1024) if abs($b) >= 1024;
    return sprintf('%.0f B', $b);
}

sub _duration {
    my ($s) = @_;
    return sprintf('%d min %02d s', $s / 60, $s % 60) if $s >= 60;
    return sprintf('%.0f s', $s);
}

my %WL_TITLE = (
    read_write => 'oltp_read_write --skip_trx=on (autocommit: 14 reads, '
        . '4 writes per event)',
    web => 'causal_web.lua (a page: a write on one connection, the read '
        . 'of it on the next, 8 point selects on both; 90 % reads)',
);

sub _wl_title {
    my ($wl) = @_;
    return ($WL_TITLE{ $wl->{name} } // $wl->{script})
        . ", $PS_LABEL{$wl->{ps}}";
}

sub _series_label {
    my ($s) = @_;
    return $s->{target}->label . " ($s->{transport})";
}


# --- docs/benchmarks.md --------------------------------------------------

sub write_markdown {
    my ($res, $path) = @_;
    my @md = (_md_head($res), _md_method($res), _md_floor($res),
              _md_analysis($res),
              $res->{opt}{causal} ? _md_causal($res) : _md_throughput($res),
              _md_idle($res), _md_plots($res), _md_notes($res));
    open(my $fh, '>', "$path.new") or die "$path.new: $!\n";
    print $fh join("\n", @md);
    close $fh or die "$path.new: $!\n";
    rename "$path.new", $path or die "$path: $!\n";
    note('wrote %s', $path);
}

sub _md_head {
    my ($res) = @_;
    my $c = $res->{ctx};
    my $v = $c->{versions};
    my $o = $res->{opt};
    my $date = strftime('%Y-%m-%d %H:%M UTC', gmtime $c->{started});
    my @l = ('# sluice benchmarks', '',
        "Written by `$res->{command}` on $date in "
        . _duration($c->{phases}{total}) . '.', '');
    push @l, '> **Quick mode** (' . $o->{time} . ' s per run, '
        . $o->{rounds} . ' rounds): a before/after check while '
        . 'optimising, not numbers to quote.  Run `contrib/bench/run` '
        . 'without --quick for those.', '' if $o->{quick};
    my $load = $res->{other_load};
    push @l, '| | |', '|---|---|',
        sprintf('| machine | %d × %s, %.1f GiB, %s |', $c->{nproc},
                cpu_model(), mem_total() / 2**30, $v->{kernel} // '?'),
        "| sluice | $v->{sluice} |",
        "| HAProxy | " . ($v->{haproxy} // '?') . ' |',
        "| MariaDB | $v->{mariadb} |",
        "| sysbench | " . ($v->{sysbench} // '?') . ' |',
        "| open files limit | $c->{nofile} |",
        '| CPU idle states | ' . ($v->{idle} // '?') . ' |';
    push @l, sprintf('| other processes\' CPU during the runs | median '
        . '%.2f, max %.2f cores |', $load->{median}, $load->{max}) if $load;
    return (@l, '');
}

sub _md_method {
    my ($res) = @_;
    my $o = $res->{opt};
    return ('## Method', '',
        '- MariaDB primary and replica from the test sandbox '
        . '(`t/lib/Sluice/Sandbox.pm`) with `--thread-handling=pool-of-'
        . 'threads` and room for the idle sessions; sysbench tables '
        . "prepared once: $o->{tables} × $o->{table_size} rows.  All "
        . 'proxies forward to the primary over loopback TCP; the '
        . 'readwritesplit targets (rwsplit-*) send autocommit reads to '
        . 'the replica and transactions to the primary.',
        '- Each point (workload, client threads) runs every series '
        . "(target and transport) once per round, the series alternating "
        . "within the round (A B C … A B C …), $o->{rounds} round"
        . ($o->{rounds} == 1 ? '' : 's') . " of $o->{time} s.  Reported: "
        . 'the median over the rounds.',
        '- QPS: sysbench\'s queries per second.  p95: 95th percentile of '
        . 'the latency of one sysbench event (a query for '
        . 'oltp_point_select, a transaction of 16 queries for '
        . 'oltp_read_only), from sysbench\'s histogram.  vs direct: QPS '
        . 'over the direct QPS with the same transport.  Spread: (max − '
        . 'min) / median of the QPS over the rounds.',
        '- Proxy CPU per query: user + system time of all the proxy\'s '
        . 'processes (sluice master and workers, the haproxy process, '
        . 'nullserver\'s process), '
        . 'from /proc/PID/stat before and after the run (connects and '
        . 'disconnects included), divided by the queries sysbench '
        . 'reports.  Processes are known by pid, never by name.',
        '- Idle sessions: the RSS of the sluice workers (the haproxy '
        . 'process) before and while `contrib/bench/idleconn` holds N '
        . 'logged-in sessions open over TCP; per session = the difference '
        . '/ N.  Each proxy is started afresh for it.',
        '- sysbench, MariaDB and the proxy share the machine\'s CPUs: '
        . 'ratios are of this machine, not of a proxy on its own host.',
        $o->{causal} ? _md_causal_method() : (),
        '');
}

sub _md_causal_method {
    return ('- --causal: readwritesplit with 2 workers and a monitor '
        . '(monitor_interval 1s, the default), one target per causal_reads '
        . 'setting.  Before each run the bench waits until the replica '
        . 'has applied every transaction of the primary.  Reads to the '
        . 'replica: the bench user\'s SELECTs counted by the replica over '
        . 'those counted by both servers (userstat, '
        . 'information_schema.USER_STATISTICS: the monitor\'s and the '
        . 'replication applier\'s are not the bench user\'s), summed over '
        . 'the rounds (the range: of the rounds).  Replica\'s other '
        . 'statements per read: its non-SELECT statements of that user '
        . '(the MASTER_GTID_WAIT of causal_reads_timeout, session '
        . 'commands) over all reads.  Stale reads: causal_web.lua\'s '
        . 'reads of a row on the connection after the one that just wrote '
        . 'it that did not return the value written, over all such reads.  '
        . 'vs local: the TPS over that of causal_reads local with the same '
        . 'causal_reads_timeout in the same round (run just before or '
        . 'after it), median and range over the rounds.  Replica behind: '
        . 'transactions the primary had binlogged and the replica not '
        . 'applied as sysbench ended '
        . '(median, max).');
}

sub _md_causal {
    my ($res) = @_;
    my @l = ('## causal_reads', '');
    for my $wl (@{ $res->{workloads} }) {
        push @l, '### ' . _wl_title($wl), '',
            '| threads | causal_reads | TPS | QPS | vs local (rounds) '
            . '| p95 ms | reads to the replica (rounds) | replica\'s other '
            . 'statements per read | stale reads | replica behind '
            . '(max) | proxy CPU µs/query | spread |',
            '|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|';
        for my $th (@{ $res->{opt}{threads} }) {
            my $first = 1;
            for my $s (@{ $res->{series} }) {
                my $p = _point($res, $wl->{id}, $s->{id}, $th) or next;
                push @l, _md_causal_row($p, $s, $first ? $th : '');
                $first = 0;
            }
        }
        push @l, '', _md_causal_extra($res, $wl);
    }
    return @l;
}

# The servers count the SELECTs sysbench sent, and the proxy's own: the
# GTID asked of a client that did not negotiate session tracking.
sub _md_causal_extra {
    my ($res, $wl) = @_;
    my @x;
    for my $s (@{ $res->{series} }) {
        for my $th (@{ $res->{opt}{threads} }) {
            my $p = _point($res, $wl->{id}, $s->{id}, $th) or next;
            push @x, "$s->{target}{name} at $th threads: $p->{reads_extra}"
                if $p->{reads_extra};
        }
    }
    return ('The servers counted as many SELECTs as sysbench sent.', '')
        unless @x;
    return ('SELECTs the servers counted beyond those sysbench sent: '
            . join('; ', @x) . '.', '');
}

sub _md_causal_row {
    my ($p, $s, $th) = @_;
    my $t = $s->{target};
    return sprintf '| %s | %s | failed | | | | | | | | | |', $th,
        $t->{setting} // $t->label unless $p->{n};
    return sprintf '| %s | %s | %.0f | %.0f | %s | %.3f | %s | %s | %s '
        . '| %s | %s | %s |', $th, $t->{setting} // $t->label, $p->{tps},
        $p->{qps}, defined $p->{vs_base} ? sprintf('× %.3f (%.3f–%.3f)',
            $p->{vs_base}, $p->{vs_base_min}, $p->{vs_base_max}) : '—',
        $p->{p95_ms}, defined $p->{replica_share} ? sprintf('%s (%s–%s)',
            _pct($p->{replica_share}), _pct($p->{share_min}),
            _pct($p->{share_max})) : '—',
        _f($p->{replica_other_per_read}, '%.3f'),
        defined $p->{checks} ? sprintf('%d of %d (%s)', $p->{stale},
            $p->{checks}, _pct($p->{checks} ? $p->{stale} / $p->{checks}
                                             : undef)) : '—',
        defined $p->{backlog} ? sprintf('%.0f (%d)', $p->{backlog},
            $p->{backlog_max}) : '—',
        _f($p->{cpu_us_per_query}, '%.2f'),
        _f(defined $p->{spread} ? $p->{spread} * 100 : undef, '%.1f %%');
}

sub _md_floor {
    my ($res) = @_;
    my @l = ('## Floor', '', '| result | check | numbers |', '|---|---|---|');
    push @l, map { sprintf '| %s | %s | %s |', _verdict($_), $_->{check},
                   $_->{detail} } @{ $res->{floor} };
    return (@l, '');
}

sub _md_throughput {
    my ($res) = @_;
    my @l = ('## Throughput', '');
    for my $wl (@{ $res->{workloads} }) {
        push @l, '### ' . _wl_title($wl), '',
            '| threads | target | via | QPS | vs direct | p95 ms '
            . '| proxy CPU µs/query | spread |',
            '|--:|---|---|--:|--:|--:|--:|--:|';
        for my $th (@{ $res->{opt}{threads} }) {
            my $first = 1;
            for my $s (@{ $res->{series} }) {
                my $p = _point($res, $wl->{id}, $s->{id}, $th) or next;
                push @l, sprintf '| %s | %s | %s | %s | %s | %s | %s | %s |',
                    $first ? $th : '', $s->{target}->label, $s->{transport},
                    $p->{n} ? _f($p->{qps}, '%.0f') : 'failed',
                    _f($p->{ratio}, '%.2f'), _f($p->{p95_ms}, '%.3f'),
                    _f($p->{cpu_us_per_query}, '%.2f'),
                    _f(defined $p->{spread} ? $p->{spread} * 100 : undef,
                       '%.1f %%');
                $first = 0;
            }
        }
        push @l, '';
    }
    return @l;
}

sub _md_idle {
    my ($res) = @_;
    return () unless @{ $res->{idle} };
    my @l = ('## Idle sessions', '',
        '| target | sessions | RSS before | RSS with the sessions '
        . '| per session | backend connections |',
        '|---|--:|--:|--:|--:|--:|');
    for my $i (@{ $res->{idle} }) {
        if ($i->{error}) {
            push @l, "| $i->{target} | failed: $i->{error} | | | | |";
            next;
        }
        push @l, sprintf '| %s | %d | %s | %s | %s | %d |', $i->{label},
            $i->{conns}, _bytes($i->{rss_before}), _bytes($i->{rss_after}),
            _bytes($i->{bytes_per_conn}), $i->{backend_conns};
    }
    return (@l, '');
}

sub _md_plots {
    my ($res) = @_;
    return () unless $res->{plots} && @{ $res->{plots} };
    my @l = ('## Plots', '');
    push @l, 'The products as shipped; the scheduling-policy variants '
        . 'are in the tables above.', ''
        if grep { $_->is_variant } @{ $res->{targets} };
    push @l, "![$_->[1]]($_->[0])", '' for @{ $res->{plots} };
    return @l;
}

# contrib/bench/analysis.md, written by hand: what was changed on the
# hot path and what it bought, what the profile shows, why a floor point
# fails.  It speaks of the run it was written against; the tables below
# are this run's.
sub _md_analysis {
    my ($res) = @_;
    my $path = $res->{analysis} or return ();
    open(my $fh, '<', $path) or return ();
    local $/;
    my $text = <$fh>;
    $text =~ s/\s+\z/\n/;
    return ($text);
}

sub _md_notes {
    my ($res) = @_;
    my @n = @{ $res->{ctx}{notes} };
    for my $t (@{ $res->{targets} }) {
        push @n, map { "$t->{name}: $_" } $t->problems;
        my @w = $t->notes;
        push @n, "$t->{name}: " . scalar(@w) . " warnings, first: $w[0]"
            if @w;
    }
    for my $key (sort keys %{ $res->{points} }) {
        push @n, map { "$key: $_" } @{ $res->{points}{$key}{errors} };
    }
    return () unless @n;
    splice @n, 40, @n - 40, '…' if @n > 41;
    return ('## Notes', '', map({ "- $_" } @n), '');
}


# --- plots -------------------------------------------------------------------

my @COLORS = ('#000000', '#1f77b4', '#2ca02c', '#d62728', '#ff7f0e',
              '#9467bd', '#8c564b', '#e377c2', '#17becf');

# bench-qps.png and bench-cpu.png: one panel per workload, one line per
# series (but the policy variants), threads on a log scale.
sub write_plots {
    my ($res, $dir) = @_;
    my $gp = eval { find_bin('gnuplot') };
    if (!$gp) {
        push @{ $res->{ctx}{notes} }, 'no gnuplot: no plots';
        return;
    }
    my $data = "$res->{ctx}{workdir}/plot";
    mkdir $data;
    my %color;
    my $i = 0;
    $color{ $_->{target}{name} } //= $COLORS[$i++ % @COLORS]
        for @{ $res->{series} };
    my @plots;
    for my $what (['qps', 'queries per second', 'bench-qps.png', 0],
                  ['cpu_us_per_query', 'proxy CPU µs per query',
                   'bench-cpu.png', 1]) {
        my ($k, $ylabel, $png, $proxies) = @$what;
        my $script = _gp_script($res, $data, $k, $ylabel, "$dir/$png",
                                $proxies, \%color) // next;
        open(my $fh, '>', "$data/$k.gp") or die "$data/$k.gp: $!\n";
        print $fh $script;
        close $fh;
        my ($rc, $out) = run_capture(cmd => [ $gp, "$data/$k.gp" ],
                                     timeout => 60);
        if ($rc) {
            push @{ $res->{ctx}{notes} }, "gnuplot failed for $png: $out";
            next;
        }
        note('wrote %s/%s', $dir, $png);
        push @plots, [ $png, $ylabel ];
    }
    $res->{plots} = \@plots;
    # the Markdown refers to the plots: write it again if it is there
    write_markdown($res, "$dir/benchmarks.md")
        if @plots && -f "$dir/benchmarks.md";
}

sub _gp_script {
    my ($res, $data, $k, $ylabel, $png, $proxies, $color) = @_;
    # the scheduling-policy variants are in the tables only: with them a
    # panel would carry 16 lines
    my @series = grep { (!$proxies || $_->{target}->is_proxy)
                        && !$_->{target}->is_variant } @{ $res->{series} };
    return undef unless @series;
    my @wls = @{ $res->{workloads} };
    my $rows = @wls > 2 ? 2 : 1;
    my $cols = @wls > 1 ? 2 : 1;
    my @th = @{ $res->{opt}{threads} };
    my $xtics = join ', ', map { "\"$_\" $_" } @th;
    my $mode = $res->{opt}{quick} ? ' (quick mode)' : '';
    my @g = (
        sprintf("set terminal pngcairo noenhanced size %d,%d "
                . "font 'sans,10'", 700 * $cols, 560 * $rows + 40),
        "set output '$png'",
        sprintf("set multiplot layout %d,%d title '%s against client "
                . "threads, %s%s'", $rows, $cols, "sluice bench: $ylabel",
                strftime('%Y-%m-%d', gmtime $res->{ctx}{started}), $mode),
        'set logscale x 2', "set xtics ($xtics)", 'set grid',
        "set ylabel '$ylabel'",
        'set yrange [0:*]', 'set key below maxcols 2 font \',8\'',
        'set offsets graph 0.05, graph 0.05, graph 0.05, 0');
    for my $wl (@wls) {
        my @plot;
        for my $s (@series) {
            my $f = _gp_data($res, $data, $wl, $s, $k, \@th) // next;
            push @plot, sprintf "'%s' using 1:2 with linespoints lw 2 "
                . "pt 7 ps 0.8 dt %d lc rgb '%s' title '%s'", $f,
                $s->{transport} eq 'unix' ? 2 : 1,
                $color->{ $s->{target}{name} }, _series_label($s);
        }
        my $title = _wl_title($wl);
        push @g, "set title '$title'",
            @plot ? 'plot ' . join(", \\\n     ", @plot)
                  : "set label 1 'no data' at graph 0.5, graph 0.5; "
                    . 'plot 1/0 notitle; unset label 1';
    }
    push @g, 'unset multiplot';
    return join("\n", @g) . "\n";
}

sub _gp_data {
    my ($res, $dir, $wl, $s, $k, $th) = @_;
    my @rows;
    for my $t (@$th) {
        my $p = _point($res, $wl->{id}, $s->{id}, $t) or next;
        push @rows, "$t $p->{$k}\n" if defined $p->{$k};
    }
    return undef unless @rows;
    my $name = "$dir/" . join('_', $k, $wl->{name}, $wl->{ps},
                              $s->{target}{name}, $s->{transport}) . '.dat';
    open(my $fh, '>', $name) or die "$name: $!\n";
    print $fh @rows;
    close $fh;
    return $name;
}


# --- stdout ----------------------------------------------------------------

sub print_summary {
    my ($res) = @_;
    my $o = $res->{opt};
    print "\nsluice bench", ($o->{quick} ? ' (quick)' : ''), ': ',
        scalar(keys %{ $res->{points} }), ' points in ',
        _duration($res->{ctx}{phases}{total}), "; $o->{output}/"
        . "benchmarks.md\n";
    for my $c (@{ $res->{floor} }) {
        printf "  %-4s  %s: %s\n", _verdict($c), $c->{check}, $c->{detail};
    }
    print 'BENCH ', JSON::PP->new->canonical->encode(_json($res)), "\n";
}

# A number with 4 significant digits for the JSON, a string as it is.
sub _num {
    my ($v) = @_;
    return undef unless defined $v;
    return $v unless $v =~ /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\z/;
    return 0 + sprintf('%.4g', $v);
}

sub _json {
    my ($res) = @_;
    my $c = $res->{ctx};
    my @r;
    for my $wl (@{ $res->{workloads} }) {
        for my $s (@{ $res->{series} }) {
            for my $th (@{ $res->{opt}{threads} }) {
                my $p = _point($res, $wl->{id}, $s->{id}, $th) or next;
                push @r, {
                    workload => $wl->{script}, ps_mode => $wl->{ps},
                    target => $s->{target}{name},
                    transport => $s->{transport}, threads => 0 + $th,
                    runs => 0 + $p->{n},
                    map({ ($_ => _num($p->{$_})) }
                        qw(qps p95_ms ratio cpu_us_per_query
                           server_cpu_us_per_query spread)),
                    map({ ($_ => _num($p->{$_})) } grep { defined $p->{$_} }
                        qw(tps replica_share replica_other_per_read checks
                           stale backlog vs_base reads_extra)),
                    @{ $p->{errors} } ? (errors => $p->{errors}) : () };
            }
        }
    }
    my @idle = map { my $i = $_; +{ map { ($_ => _num($i->{$_})) }
        grep { defined $i->{$_} } qw(target conns rss_before rss_after
        bytes_per_conn backend_conns error) } } @{ $res->{idle} };
    return {
        date => strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $c->{started}),
        mode => $res->{opt}{quick} ? 'quick' : 'full',
        command => $res->{command},
        seconds => 0 + sprintf('%.0f', $c->{phases}{total}),
        machine => { nproc => 0 + $c->{nproc}, cpu => cpu_model(),
                     mem_bytes => 0 + mem_total() },
        versions => $c->{versions},
        settings => { map { ($_ => $res->{opt}{$_}) }
                      qw(rounds time tables table_size idle_conns
                         scrape) },
        results => \@r, idle => \@idle,
        floor => [ map { +{ check => $_->{check}, result => _verdict($_),
                            detail => $_->{detail} } } @{ $res->{floor} } ],
    };
}

1;
