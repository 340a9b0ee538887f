package SluiceBench::Sysbench;

# sysbench 1.0 (Debian's) as the bench drives it: the command line for a
# run against one endpoint, preparing the tables once, and reading the
# report.  p95 is computed from the latency histogram (--histogram=on,
# values to 1 µs) rather than taken from the summary, which rounds to
# 10 µs: at one client thread a point select takes about 100 µs, and the
# floor compares p95 within 10 %.

use strict;
use warnings;

use Exporter qw(import);
use List::Util qw(min max sum);

use Sluice::Sandbox qw(find_bin);
use SluiceBench::Util qw(run_capture);

our @EXPORT_OK = qw(sysbench_bin sysbench_cmd sysbench_parse
                    sysbench_prepare);

sub sysbench_bin { find_bin('sysbench') }

# Options common to prepare and run: user, schema, tables.
sub _common {
    my (%o) = @_;
    return ('--db-driver=mysql', "--mysql-user=$o{user}",
            "--mysql-password=$o{password}", "--mysql-db=$o{db}",
            "--tables=$o{tables}", "--table-size=$o{table_size}");
}

# How to reach an endpoint: { tcp => [HOST, PORT] } or { unix => PATH }.
sub _endpoint {
    my ($ep) = @_;
    return ("--mysql-socket=$ep->{unix}") if $ep->{unix};
    return ("--mysql-host=$ep->{tcp}[0]", "--mysql-port=$ep->{tcp}[1]");
}

# sysbench_cmd(script => 'oltp_point_select' | PATH of a .lua,
#   ps => 'disable'|'auto', args => [ more options of the script ],
#   threads => N, time => S, endpoint => {...}, user, password, db,
#   tables, table_size): the argv of one run.
sub sysbench_cmd {
    my (%o) = @_;
    return [ sysbench_bin(), $o{script}, _common(%o), _endpoint($o{endpoint}),
             @{ $o{args} // [] },
             "--db-ps-mode=$o{ps}", "--threads=$o{threads}",
             "--time=$o{time}", '--events=0', '--report-interval=0',
             '--histogram=on', '--percentile=95', 'run' ];
}

# Create the tables (over the primary's socket) unless they are there with
# the right number of rows: a kept sandbox is prepared only once.
sub sysbench_prepare {
    my (%o) = @_;
    my $dbh = $o{dbh};
    my $have = $dbh->selectcol_arrayref(
        'SELECT table_name FROM information_schema.tables '
        . "WHERE table_schema = ? AND table_name REGEXP '^sbtest[0-9]+\$'",
        undef, $o{db});
    if (@$have == $o{tables} && grep { $_ eq "sbtest$o{tables}" } @$have) {
        my $rows = $dbh->selectrow_array(
            "SELECT COUNT(*) FROM `$o{db}`.`sbtest$o{tables}`");
        return 'present' if $rows == $o{table_size};
    }
    $dbh->do("DROP TABLE `$o{db}`.`$_`") for @$have;
    my ($rc, $out) = run_capture(
        cmd => [ sysbench_bin(), 'oltp_read_only', _common(%o),
                 _endpoint($o{endpoint}), "--threads=$o{threads}",
                 'prepare' ],
        log => $o{log}, timeout => 600);
    die "sysbench prepare failed ($rc), see $o{log}:\n"
        . join('', map { "    $_\n" } (split /\n/, $out)[-10 .. -1])
        if $rc != 0;
    return 'prepared';
}

# The report of one run: { queries, reads, writes, qps, tps, events,
# seconds, p95_ms, p95_summary_ms, avg_ms, errors, reconnects } or
# { error => TEXT }; and with the lines `causal check: thread N reads R
# stale S` that contrib/bench/causal_web.lua prints, { checks, stale },
# their sums.
sub sysbench_parse {
    my ($text) = @_;
    my %r;
    if ($text =~ /^\s*FATAL: (.*)$/m || $text =~ /^\s*ALERT: (.*)$/m) {
        return { error => $1 };
    }
    ($r{queries}, $r{qps}) =
        $text =~ /^\s*queries:\s+(\d+)\s+\(([\d.]+) per sec/m;
    ($r{events}, $r{tps}) =
        $text =~ /^\s*transactions:\s+(\d+)\s+\(([\d.]+) per sec/m;
    ($r{reads})      = $text =~ /^\s*read:\s+(\d+)/m;
    ($r{writes})     = $text =~ /^\s*write:\s+(\d+)/m;
    ($r{errors})     = $text =~ /^\s*ignored errors:\s+(\d+)/m;
    ($r{reconnects}) = $text =~ /^\s*reconnects:\s+(\d+)/m;
    ($r{seconds})    = $text =~ /^\s*total time:\s+([\d.]+)s/m;
    ($r{avg_ms})     = $text =~ /^\s*avg:\s+([\d.]+)/m;
    ($r{p95_summary_ms}) = $text =~ /^\s*95th percentile:\s+([\d.]+)/m;
    return { error => 'no statistics in the sysbench output' }
        unless defined $r{queries} && defined $r{seconds};
    return { error => 'no query completed' } unless $r{queries} > 0;
    $r{p95_ms} = _hist_pct($text, 95) // $r{p95_summary_ms};
    while ($text =~ /^causal check: thread \d+ reads (\d+) stale (\d+)$/mg) {
        $r{checks} += $1;
        $r{stale} += $2;
    }
    return \%r;
}

# sysbench 1.0 keeps latencies in 1024 buckets spaced logarithmically
# from 0.001 ms to 100 s (sb_histogram.c, sb_logger.c): bucket I holds
# exp(I / MULT + ln MIN), 1.8 % apart.  The printout rounds bucket values
# to 1 µs, which below 50 µs merges neighbouring buckets; the percentile
# is computed on the buckets themselves, found back from the printout.
use constant { HIST_SIZE => 1024, HIST_MIN => 1e-3, HIST_MAX => 1e5 };
my $HIST_MULT = (HIST_SIZE - 1) / (log(HIST_MAX) - log(HIST_MIN));

sub _bucket_value { exp($_[0] / $HIST_MULT + log(HIST_MIN)) }

# Bucket indices above $after whose value prints as $str.
sub _bucket_candidates {
    my ($str, $after) = @_;
    my $v = $str > 0 ? $str : HIST_MIN;
    my $guess = int((log($v) - log(HIST_MIN)) * $HIST_MULT + 0.5);
    my @c;
    for my $i (max($after + 1, $guess - 40) .. min(HIST_SIZE - 1,
                                                    $guess + 40)) {
        push @c, $i if sprintf('%.3f', _bucket_value($i)) eq $str;
    }
    return @c;
}

# [value, count] per printed line, the value that of its bucket: a run of
# k lines printing the same value takes k of the buckets that print so
# (all of them when there are k; the middle ones otherwise: then the value
# is within a bucket or two, rather than within 1 µs).
sub _hist_buckets {
    my (@lines) = @_;
    my @out;
    my $last = -1;
    while (@lines) {
        my $str = $lines[0][0];
        my $k = 0;
        $k++ while $k < @lines && $lines[$k][0] eq $str;
        my @run = splice @lines, 0, $k;
        my @c = _bucket_candidates($str, $last);
        if (@c < $k) {              # not sysbench 1.0's buckets
            push @out, map { [ $_->[0] + 0, $_->[1] ] } @run;
            next;
        }
        my $from = int((@c - $k) / 2);
        for my $j (0 .. $k - 1) {
            push @out, [ _bucket_value($c[$from + $j]), $run[$j][1] ];
        }
        $last = $c[$from + $k - 1];
    }
    return @out;
}

# The P-th percentile of the latency histogram, as sysbench computes it:
# the first bucket where the running count reaches round(N * P / 100).
sub _hist_pct {
    my ($text, $p) = @_;
    my ($hist) = $text =~ /Latency histogram[^\n]*\n[^\n]*\n(.*?)\n\s*\n/s
        or return undef;
    my @lines;
    for (split /\n/, $hist) {
        push @lines, [ $1, $2 ] if /^\s*(\d+\.\d{3})\s+\|\**\s*(\d+)\s*$/;
    }
    my @b = _hist_buckets(@lines) or return undef;
    my $total = sum(map { $_->[1] } @b);
    my $need = int($total * $p / 100 + 0.5);
    my $run = 0;
    for (@b) {
        $run += $_->[1];
        return $_->[0] if $run >= $need;
    }
    return $b[-1][0];
}

1;
