#!/usr/bin/perl

# The listeners' metrics (issue 23, section 1): per server {} block (label
# `listener`, its first listen) and worker, the sessions open and
# accepted, the refusals by reason, the client bytes, the commands by
# kind, the errors by kind, readwritesplit's retries and causal reads;
# the query durations as histograms per listener and route (primary,
# replica, cache), the backend response times per server.  Every series
# is there at 0 before any client came; each count moves when what it
# counts happens, through readconn (byte mode), readwritesplit and the
# cache (command mode); a worker killed with sessions open leaves none
# counted; promtool accepts the scrape.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use IO::Socket::INET;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('status', 'readconn', 'readwritesplit', 'cache');
$t->need((grep { -x "$_/promtool" } split /:/, $ENV{PATH}),
         'promtool is not in PATH (contrib/deps.sh installs prometheus)');

my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE traffic (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO traffic VALUES (1, 10), (2, 20)');
my $r = $t->replica_dbh;
wait_for(sub { $r->selectrow_array('SELECT COUNT(*) FROM traffic') == 2 },
         what => 'the table on the replica');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 2;
status_listen 127.0.0.1:%%PORT_3%%;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream one {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
    }
    upstream both {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream one; }
    server { listen 127.0.0.1:%%PORT_1%%; router readwritesplit;
             upstream both; causal_reads local;
             causal_reads_timeout 10s; }
    server { listen 127.0.0.1:%%PORT_2%%; router readconn; upstream one;
             filters cache; cache qc; cache_ttl 60s; idle_timeout 1s;
             cache_rule long match=table "^test\\.traffic$" ttl=120s; }
}
EOF
$t->run;
$t->plan(34);

my @lst = map { '127.0.0.1:' . $t->port($_) } 0 .. 2;
my $sport = $t->port(3);

sub scrape {
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$sport",
                                  Timeout => 5) or return '';
    print {$s} "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    local $/;
    my $all = <$s> // '';
    return (split /\r\n\r\n/, $all, 2)[1] // '';
}
# The sum of the samples of family $name whose labels include %want.
sub metric {
    my ($m, $name, %want) = @_;
    my ($sum, $n) = (0, 0);
    for my $line (split /\n/, $m) {
        next unless $line =~ /^\Q$name\E(?:\{(.*)\})? (\S+)$/;
        my ($labels, $v) = ($1 // '', $2);
        my %l = $labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
        next if grep { ($l{$_} // '') ne $want{$_} } keys %want;
        $sum += $v;
        $n++;
    }
    return $n ? $sum : undef;
}

sub promtool_ok {
    my ($text, $name) = @_;
    open(my $fh, '|-', 'promtool check metrics > '
         . $t->testdir . '/promtool.out 2>&1') or die "promtool: $!";
    print {$fh} $text;
    close($fh);
    is($? >> 8, 0, $name) or diag($t->read_file('promtool.out'));
}

ok(wait_for(sub { scrape() =~ /^sluice_sessions\{/m },
            what => 'the status listener'), 'the status listener answers');

# --- every series at 0 before any client ----------------------------------

my $m = scrape();
my $every = 1;
for my $l (@lst) {
    for my $w (0, 1) {
        for my $s ('sluice_sessions{listener="%s",worker="%d"} 0',
                   'sluice_sessions_accepted_total{listener="%s",worker="%d"} 0',
                   'sluice_commands_total{listener="%s",worker="%d",'
                   . 'command="query"} 0',
                   'sluice_errors_total{listener="%s",worker="%d",'
                   . 'kind="server"} 0',
                   'sluice_sessions_refused_total{listener="%s",worker="%d",'
                   . 'reason="access_denied"} 0')
        {
            my $line = sprintf($s, $l, $w);
            $every &&= index($m, "\n$line\n") >= 0
                or diag("missing: $line");
        }
    }
    for my $route (qw(primary replica cache any)) {
        my $line = "sluice_query_duration_seconds_count{listener=\"$l\","
                   . "route=\"$route\"} 0";
        $every &&= index($m, "\n$line\n") >= 0 or diag("missing: $line");
    }
}
ok($every, 'every listener\'s series, per worker and route, at 0');
like($m, qr/^sluice_server_response_duration_seconds_bucket\{upstream="one",
            server="[^"]+",le="0\.0001"\}\ 0$/mx,
     'the servers\' response histograms at 0');

promtool_ok($m, 'promtool accepts the scrape');

# --- readconn (byte mode) -------------------------------------------------

my $before = scrape();
my $d = $t->dbh(port => $t->port(0));
ok(wait_for(sub { metric(scrape(), 'sluice_sessions', listener => $lst[0])
                  == 1 }, what => 'one session'),
   'readconn: one session open');
$d->selectrow_array('SELECT v FROM traffic WHERE id = 1') for 1 .. 5;
my $sth = $d->prepare('SELECT v FROM traffic WHERE id = ?',
                      { mariadb_server_prepare => 1 });
$sth->execute(2);
$sth->fetchall_arrayref;
ok(!defined eval { $d->do('SELECT * FROM no_such_table') },
   'a statement the server refuses');
$m = scrape();
sub grew {
    my ($name, $by, %labels) = @_;
    my $a = metric($before, $name, %labels) // 0;
    my $b = metric($m, $name, %labels) // 0;
    return $b - $a >= $by ? 1 : do {
        diag("$name @{[ %labels ]}: $a -> $b, not +$by"); 0 };
}
ok(grew('sluice_sessions_accepted_total', 1, listener => $lst[0]),
   'readconn: the session accepted');
ok(grew('sluice_commands_total', 6, listener => $lst[0], command => 'query'),
   'readconn: the queries counted');
ok(grew('sluice_commands_total', 1, listener => $lst[0],
        command => 'prepare')
   && grew('sluice_commands_total', 1, listener => $lst[0],
           command => 'execute'),
   'readconn: a prepare and an execute counted');
ok(grew('sluice_errors_total', 1, listener => $lst[0], kind => 'server'),
   'readconn: the server\'s ERR counted');
ok(grew('sluice_query_duration_seconds_count', 7, listener => $lst[0],
        route => 'primary'),
   'readconn: the answers timed on the primary route');
ok(grew('sluice_server_response_duration_seconds_count', 7,
        upstream => 'one'),
   '... and on the server\'s response histogram');
ok(metric($m, 'sluice_query_duration_seconds_sum', listener => $lst[0],
          route => 'primary') > 0, '... with a sum of seconds above 0');
ok(grew('sluice_client_received_bytes_total', 100, listener => $lst[0])
   && grew('sluice_client_sent_bytes_total', 100, listener => $lst[0]),
   'readconn: the client bytes both ways');
is(metric($m, 'sluice_commands_total', listener => $lst[1]), 0,
   'another listener counts none of it');
$d->disconnect;
ok(wait_for(sub { metric(scrape(), 'sluice_sessions', listener => $lst[0])
                  == 0 }, what => 'no session'),
   'readconn: the session closed');

# --- refusals -------------------------------------------------------------

$before = scrape();
ok(!$t->dbh(port => $t->port(0), password => 'wrong'),
   'a wrong password is refused');
$m = scrape();
ok(grew('sluice_sessions_refused_total', 1, listener => $lst[0],
        reason => 'access_denied'),
   'refused: access_denied counted');
is(metric($m, 'sluice_sessions', listener => $lst[0]), 0,
   '... and no session is left open');

# --- readwritesplit --------------------------------------------------------

$before = scrape();
my $w = $t->dbh(port => $t->port(1));
$w->selectrow_array('SELECT v FROM traffic WHERE id = 1') for 1 .. 3;
$w->do('UPDATE traffic SET v = v + 1 WHERE id = 2');
my ($v) = $w->selectrow_array('SELECT v FROM traffic WHERE id = 2');
is($v, 21, 'readwritesplit: the read after the write sees it');
$m = scrape();
ok(grew('sluice_query_duration_seconds_count', 3, listener => $lst[1],
        route => 'replica'), 'readwritesplit: the reads on the replica route');
ok(grew('sluice_query_duration_seconds_count', 1, listener => $lst[1],
        route => 'primary'), 'readwritesplit: the write on the primary route');
ok(grew('sluice_readwritesplit_causal_reads_total', 1, listener => $lst[1]),
   'readwritesplit: the read after the write counted as a causal read');
ok(grew('sluice_server_response_duration_seconds_count', 3,
        upstream => 'both', server => $t->replica),
   'the replica\'s response histogram');
$w->disconnect;

# --- the cache -------------------------------------------------------------

$before = scrape();
my $c = $t->dbh(port => $t->port(2));
$c->selectrow_array('SELECT v FROM traffic WHERE id = 1') for 1 .. 4;
$m = scrape();
ok(grew('sluice_query_duration_seconds_count', 3, listener => $lst[2],
        route => 'cache'), 'the cache: the hits on the cache route');
ok(grew('sluice_query_duration_seconds_count', 1, listener => $lst[2],
        route => 'primary'), 'the cache: the miss on the primary route');
ok(grew('sluice_commands_total', 4, listener => $lst[2],
        command => 'query'), 'the cache: every query counted once');
my $rule = "long";
ok(grew('sluice_cache_rule_matches_total', 4, zone => 'qc', rule => $rule)
   && grew('sluice_cache_rule_hits_total', 3, zone => 'qc', rule => $rule)
   && grew('sluice_cache_rule_stores_total', 1, zone => 'qc',
           rule => $rule), 'the cache_rule\'s matches, hits and stores');

# idle_timeout 1s: the server block closes the idle session
ok(wait_for(sub { metric(scrape(), 'sluice_errors_total',
                         listener => $lst[2], kind => 'timeout') >= 1 },
            what => 'the idle timeout'), 'idle_timeout counted');
ok(wait_for(sub { metric(scrape(), 'sluice_sessions', listener => $lst[2])
                  == 0 }, what => 'the closed session'),
   '... and its session is no more');

# --- a killed worker's sessions --------------------------------------------

my @held = map { $t->dbh(port => $t->port(0)) } 1 .. 4;
ok(wait_for(sub { metric(scrape(), 'sluice_sessions', listener => $lst[0])
                  == 4 }, what => 'four sessions'), 'four sessions open');
$t->allow_log(qr/exited on signal 9|backend closed|client closed/);
$t->kill_worker(pid => $_) for $t->worker_pids;
ok(wait_for(sub { metric(scrape(), 'sluice_sessions', listener => $lst[0])
                  == 0 }, what => 'the dead workers\' sessions gone'),
   'the killed workers\' sessions are no longer counted');
$m = scrape();
ok(metric($m, 'sluice_sessions_accepted_total', listener => $lst[0]) >= 5,
   'the counts outlive the workers that made them');

promtool_ok($m, 'promtool accepts the scrape after the traffic');
