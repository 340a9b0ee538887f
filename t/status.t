#!/usr/bin/perl

# The status listener (issue 23, section 1): `status_listen` starts a
# `status` process that answers GET /metrics (Prometheus' text format,
# checked by promtool on a live scrape) and GET /status (JSON) from what
# it knows, never asking a worker: the build, the configuration, the
# upstream servers (the monitor's zone, the workers' counters) and the
# cache zones.  The HTTP side holds against hostile input: methods other
# than GET and HEAD, unknown paths, a head past 8 KiB, a body, another
# HTTP version, a path too long, a request trickled byte by byte (closed at
# `status_timeout`), pipelining, the cap of requests per connection and
# of connections.  A reload starts a new status process with the new
# configuration; bad directives are errors with file:line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Digest::SHA qw(sha1_hex);
use IO::Socket::INET;
use JSON::PP;
use Time::HiRes qw(time);
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('status', 'readconn', 'cache');
$t->need((grep { -x "$_/promtool" } split /:/, $ENV{PATH}),
         'promtool is not in PATH (contrib/deps.sh installs prometheus)');

my $conf = <<'EOF';
worker_processes 2;
status_listen 127.0.0.1:%%PORT_1%%;
status_timeout 1s;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 200ms;
        server %%PRIMARY%% role=primary;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_ttl 60s; }
}
EOF
$t->write_file_expand('sluice.conf', $conf);
$t->run;
$t->plan(54);
my $port = $t->port(1);

# A request's bytes on a new connection: what came back until the server
# closed it, or until $wait seconds passed.
sub raw {
    my ($bytes, $wait) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port",
                                  Timeout => 5) or return undef;
    print {$s} $bytes;
    return slurp_sock($s, $wait // 5);
}
sub slurp_sock {
    my ($s, $wait) = @_;
    my ($out, $end) = ('', time + $wait);
    $s->blocking(0);
    while (time < $end) {
        my $n = sysread($s, my $buf, 65536);
        if (defined $n && $n == 0) { return $out }          # closed
        $out .= $buf if $n;
        select(undef, undef, undef, 0.02) unless $n;
    }
    return $out . "\n(still open)";
}
sub get {
    my ($path) = @_;
    return raw("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}
sub body { my ($r) = @_; return (split /\r\n\r\n/, $r // '', 2)[1] // '' }

ok(wait_for(sub { ($t->role_pids('status')) == 1
                  && (get('/status') // '') =~ /^HTTP\/1\.1 200/ },
            what => 'the status listener'),
   'one status process answers');

# --- GET /metrics ---------------------------------------------------------

my $r = get('/metrics');
like($r, qr{^HTTP/1\.1 200 OK\r\n}, 'GET /metrics: 200');
like($r, qr{\r\nContent-Type: text/plain; version=0\.0\.4; charset=utf-8\r\n},
     'in the text format 0.0.4');
my $m = body($r);
my ($len) = $r =~ /\r\nContent-Length: (\d+)\r\n/;
is($len, length $m, 'Content-Length is the body\'s');
like($m, qr/^sluice_build_info\{version="[^"]+",modules="[^"]*readconn/m,
     'the build and its modules');
my $sha = sha1_hex($t->read_file('sluice.conf'));
like($m, qr/^sluice_config_info\{sha1="$sha"\} 1$/m,
     'the SHA-1 of the configuration file');
like($m, qr/^sluice_config_generation 1$/m, 'its generation');
like($m, qr/^sluice_worker_processes 2$/m, 'the workers it asks for');
my $fh;
open($fh, '|-', 'promtool check metrics > '
     . $t->testdir . '/promtool.out 2>&1') or die "promtool: $!";
print {$fh} $m;
close($fh);
is($? >> 8, 0, 'promtool check metrics finds nothing to say')
    or diag($t->read_file('promtool.out'));

# the upstream servers (the mysql module's metrics hook): what the monitor
# saw, what the workers count
my $srv = 'upstream="db",server="' . $t->primary . '"';
ok(wait_for(sub { body(get('/metrics'))
                  =~ /^sluice_server_state\{$srv,state="up"\} 1$/m },
            what => 'the monitor\'s check'),
   'the primary: state up, once the monitor checked it');
$m = body(get('/metrics'));
like($m, qr/^sluice_server_state\{$srv,state="down"\} 0$/m,
     '... and not down');
like($m, qr/^sluice_server_role\{$srv,role="primary"\} 1$/m, 'its role');
like($m, qr/^sluice_server_check_timestamp_seconds\{$srv\} \d/m,
     'when it was checked');
my $opened = ($m =~ /^sluice_server_connections_opened_total\{$srv\} (\d+)/m)
    ? $1 : -1;
my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.st (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.st VALUES (1, 7)');
my $d = $t->dbh;
$d->selectrow_array('SELECT v FROM st WHERE id = 1') for 1 .. 3;
$m = body(get('/metrics'));
ok(($m =~ /^sluice_server_connections_opened_total\{$srv\} (\d+)/m
    ? $1 : -1) > $opened, 'a session\'s backend connection counted');
like($m, qr/^sluice_server_connections\{$srv\} [1-9]/m,
     'and open now');
my ($open) = $m =~ /^sluice_server_connections\{$srv\} (\d+)/m;
like($m, qr/^sluice_server_connections_in_use\{$srv\} \Q$open\E$/m,
     '... and in use: a session holds every one (no pooling)');
like($m, qr/^sluice_server_sent_bytes_total\{$srv\} [1-9]/m,
     'its bytes counted');
like($m, qr/^sluice_cache_hits_total\{zone="qc"\} [1-9]/m,
     'the cache zone\'s hits (the cache module\'s metrics hook)');
like($m, qr/^sluice_cache_entries\{zone="qc"\} 1$/m, '... its entries');
like($m, qr/^sluice_cache_size_bytes\{zone="qc"\} 8388608$/m,
     '... its size');
like($m, qr/^sluice_cache_redis_lookups_total\{zone="qc"\} 0$/m,
     '... and the Redis tier\'s counters, at 0 without one');
open($fh, '|-', 'promtool check metrics > '
     . $t->testdir . '/promtool.out 2>&1') or die "promtool: $!";
print {$fh} $m;
close($fh);
is($? >> 8, 0, 'promtool is content with the servers\' and the cache\'s '
   . 'families too')
    or diag($t->read_file('promtool.out'));
$d->disconnect;

# --- GET /status, HEAD, errors --------------------------------------------

$r = get('/status');
like($r, qr{\r\nContent-Type: application/json\r\n}, 'GET /status: JSON');
my $j = eval { decode_json(body($r)) } // {};
is($j->{config}{generation}, 1, '... with the generation');
is($j->{config}{sha1}, $sha, '... and the configuration\'s hash');
my $st = $j->{metrics}{sluice_server_state} // {};
my ($up) = grep { ($_->{labels}{state} // '') eq 'up'
                  && ($_->{labels}{server} // '') eq $t->primary }
           @{ $st->{samples} // [] };
ok($st->{type} eq 'gauge' && $up && $up->{value} == 1,
   '... every metric family, its type and samples (the primary is up)');
my $h = $j->{metrics}{sluice_query_duration_seconds} // {};
ok($h->{type} eq 'histogram'
   && (grep { $_->{name} eq 'sluice_query_duration_seconds_bucket'
              && $_->{labels}{le} eq '+Inf' } @{ $h->{samples} }),
   '... histograms with their buckets');
ok(exists $j->{digests} && !defined $j->{digests},
   '... and "digests": null without digests');

$r = raw("HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
like($r, qr/^HTTP\/1\.1 200.*\r\nContent-Length: [1-9]\d*\r\n/s,
     'HEAD: the headers, with the length');
is(body($r), '', '... and no body');
$r = raw("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n") // '';
ok($r =~ /^HTTP\/1\.1 405 / && $r =~ /\r\nAllow: GET, HEAD\r\n/
   && $r =~ /\r\nConnection: close\r\n/ && $r !~ /still open/,
   'POST: 405, Allow, closed');
like(get('/metrics/x'), qr/^HTTP\/1\.1 404 /, 'an unknown path: 404');
like(get('/metrics?x=1'), qr/^HTTP\/1\.1 200 /, 'a query is ignored');
like(raw("GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
     qr/^HTTP\/1\.1 400 /, 'a body: 400');
like(raw("GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
     qr/^HTTP\/1\.1 400 /, 'chunked: 400');
like(raw("GET /metrics HTTP/2.0\r\n\r\n"), qr/^HTTP\/1\.1 505 /,
     'HTTP/2.0 spoken as 1.1: 505');
like(raw("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"),
     qr/^HTTP\/1\.1 400 /, 'garbage (a TLS hello): 400');
like(raw("GET /" . ('a' x 300) . " HTTP/1.1\r\n\r\n"), qr/^HTTP\/1\.1 414 /,
     'a path of 300 bytes: 414');
like(raw("GET /metrics HTTP/1.1\r\n" . ("X-A: " . ('b' x 100) . "\r\n") x 90),
     qr/^HTTP\/1\.1 431 .*\r\nConnection: close\r\n/s,
     'a head past 8 KiB: 431, closed');
like(raw("GET /metrics HTTP/1.1\r\n folded\r\n\r\n"), qr/^HTTP\/1\.1 400 /,
     'a folded header: 400');

# --- pipelining, the caps, a slow peer ------------------------------------

$r = raw("GET /status HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n"
         . "GET /status HTTP/1.1\r\nConnection: close\r\n\r\n");
my @codes = ($r // '') =~ /^HTTP\/1\.1 (\d+)/mg;
is("@codes", '200 404 200', 'three pipelined requests, answered in order');
unlike($r, qr/still open/, '... closed after the one that asked');

$r = raw("GET /status HTTP/1.1\r\n\r\n" x 101);
@codes = ($r // '') =~ /^HTTP\/1\.1 (\d+)/mg;
is(scalar @codes, 100, '101 pipelined: 100 answered, then closed');
like($r, qr/Connection: close\r\n\r\n\{[^\n]*\n\z/,
     '... the 100th says so');

my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port") or die;
my $t0 = time;
print {$s} 'GET /metr';
my $got = slurp_sock($s, 5);
my $dt = time - $t0;
ok($got eq '' && $dt >= 0.8 && $dt < 3,
   sprintf('a request that stops mid-way: closed after %.1f s '
           . '(status_timeout 1s)', $dt));
$s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port") or die;
$got = slurp_sock($s, 5);
ok($got eq '', 'an idle connection: closed at the timeout too');

my @held = map { IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port") }
           1 .. 64;
is(scalar(grep { defined } @held), 64, '64 connections held open');
ok(wait_for(sub { (raw("GET /status HTTP/1.1\r\n\r\n", 1) // 'x') eq '' },
            what => 'the 65th refused'),
   'the 65th is closed at once, unanswered');
close $_ for grep { defined } @held;
ok(wait_for(sub { (get('/metrics') // '')
                  =~ /^sluice_status_connections_refused_total [1-9]/m },
            what => 'the count'), 'and counted');
like(get('/metrics'), qr/^sluice_status_responses_total\{code="431"\} 1$/m,
     'answers counted by code');

# --- reload and configuration errors --------------------------------------

# the new configuration: one worker, status_timeout at its default (5 s)
(my $conf2 = $conf) =~ s/worker_processes 2;/worker_processes 1;/;
$conf2 =~ s/status_timeout 1s;\n//;
$t->write_file_expand('sluice.conf', $conf2);
ok($t->reload, 'a reload');
ok(wait_for(sub { body(get('/metrics')) =~ /^sluice_config_generation 2$/m
                  && ($t->role_pids('status')) == 1 },
            what => 'the new status process'),
   'the new configuration answers (generation 2), one status process');

$s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port") or die;
is(slurp_sock($s, 1.5), "\n(still open)",
   'status_timeout at its default: an idle connection lives past 1.5 s');
close $s;

my @bad = (
    [ 'status_listen nowhere;', qr/invalid listen address/ ],
    [ 'status_listen 127.0.0.1:1; status_listen 127.0.0.1:2;',
      qr/"status_listen" is duplicate/ ],
    [ 'status_timeout 10ms;', qr/"status_timeout" is not in 100ms to 10m/ ],
);
my @wrong;
for my $b (@bad) {
    (my $c = $conf) =~ s/status_listen [^;]*;\nstatus_timeout 1s;/$b->[0]/;
    $t->write_file_expand('bad.conf', $c);
    my ($rc, $out) = $t->test_config(conf => 'bad.conf');
    push @wrong, "$b->[0]: $out" unless $rc != 0
        && $out =~ /bad\.conf:\d+: / && $out =~ $b->[1];
}
is("@wrong", '', 'bad directives: errors with file:line');
