#!/usr/bin/perl

# auth passthrough opens a backend connection for a client nobody has
# authenticated yet, so what such clients may cost is bounded: at most
# max_handshakes of them per backend server and max_handshakes_per_host
# per client address; one over a cap reads ERR 1040 and costs the server
# nothing, and the log says so once per burst, not once per client.  A
# client that says nothing after the relayed greeting is closed at
# auth_timeout as a client that timed out, and the healthy server is not
# marked down for it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Socket qw(SO_RCVTIMEO);
use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Wire qw(read_packet raw_connect);

my $t = Sluice::Test->new;
$t->has('readconn');

# Port 2 has two servers of one role, the primary first: with nothing
# open, least-connections takes the first one unless it is marked down.
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    upstream cluster { server %%PRIMARY%% role=primary; }
    upstream pair {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        auth passthrough;
        upstream cluster;
        max_handshakes 10;
        max_handshakes_per_host 1000;
        auth_timeout 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        auth passthrough;
        upstream cluster;
        max_handshakes_per_host 5;
        auth_timeout 60s;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        auth passthrough;
        upstream pair;
        connect_timeout 1s;
        auth_timeout 2s;
    }
}
EOF
$t->run;
$t->plan(20);

my $p = $t->primary_dbh;
sub handshaking {
    return $p->selectrow_array('SELECT COUNT(*) FROM '
        . "information_schema.processlist WHERE USER = 'unauthenticated user'");
}

# The first packet a socket reads: 'greeting', 'ERR <code>: <msg>' or
# 'nothing'.
sub first_packet {
    my ($s) = @_;
    my (undef, $pl) = read_packet($s);
    return 'nothing' unless defined $pl && length $pl;
    return 'greeting' if ord($pl) == 0x0a;
    if (ord($pl) == 0xff) {
        my ($code, $msg) = unpack 'x v x x5 a*', $pl;
        return "ERR $code: $msg";
    }
    return 'other';
}

sub tally {
    my %n;
    $n{ $_ =~ s/:.*//sr }++ for @_;
    return join ', ', map { "$_ $n{$_}" } sort keys %n;
}

# --- max_handshakes ---------------------------------------------------------

my $before = handshaking();
my $start = time;
my @silent = map { raw_connect($t->port(0)) } 1 .. 50;
my @first = map { first_packet($_) } @silent;
my $burst = time - $start;
is(tally(@first), 'ERR 1040 40, greeting 10',
   '50 silent clients, max_handshakes 10: 10 greetings, 40 ERR 1040');
my ($err) = grep { /^ERR/ } @first;
like($err // '', qr/^ERR 1040: Too many connections \(max_handshakes: 10 /,
     'the message names the limit');
cmp_ok(handshaking() - $before, '<=', 10,
       'the primary holds at most 10 more connections in their handshake');
my $lines = $t->grep_log(qr/reached max_handshakes \(10 /);
ok($lines >= 1 && $lines <= 1 + int($burst),
   "the refusals are logged once per second, not per client ($lines lines "
   . sprintf('in %.2f s)', $burst));
is(scalar(grep { /\[(?:warn|error)\].*closing with error 1040/ }
          $t->grep_log(qr/max_handshakes/)), 0,
   'and not once per client at warn or above');

close $_ for @silent;
ok(wait_for(sub { handshaking() <= $before },
            what => 'the silent clients to be gone from the primary'),
   'closed silent clients leave the primary');

# Authenticated sessions give their slot back: 15 of them at once, one
# after the other, under a cap of 10.
my @dbh = grep { $_ } map { $t->dbh } 1 .. 15;
is(scalar @dbh, 15, '15 clients log in one after the other and stay: an '
   . 'authenticated client holds no handshake slot');
undef @dbh;

# --- max_handshakes_per_host -------------------------------------------------

$start = time;
@silent = map { raw_connect($t->port(1)) } 1 .. 20;
@first = map { first_packet($_) } @silent;
$burst = time - $start;
is(tally(@first), 'ERR 1040 15, greeting 5',
   '20 silent clients from one address, max_handshakes_per_host 5: 5 '
   . 'greetings, 15 ERR 1040');
($err) = grep { /^ERR/ } @first;
like($err // '', qr/^ERR\ 1040:\ Too\ many\ connections\ 
     \(max_handshakes_per_host:\ 5\ connections\ from\ 127\.0\.0\.1\ /x,
     'the message names the limit');
$lines = $t->grep_log(qr/client 127\.0\.0\.1 reached max_handshakes_per_host/);
ok($lines >= 1 && $lines <= 1 + int($burst),
   "logged once per second, not per client ($lines lines)");

my $other = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
    PeerPort => $t->port(1), LocalAddr => '127.0.0.2', Timeout => 5);
SKIP: {
    skip 'cannot bind 127.0.0.2', 1 unless $other;
    $other->sockopt(SO_RCVTIMEO, pack('l!l!', 10, 0));
    is(first_packet($other), 'greeting',
       'meanwhile a client from another address is greeted');
}
close $_ for @silent, grep { $_ } $other;

# --- a silent client --------------------------------------------------------

my $primary_id = $p->selectrow_array('SELECT @@server_id');
my $log_at = length $t->error_log;
my $s = raw_connect($t->port(2));
is(first_packet($s), 'greeting', 'a client on port 2 reads the greeting');
$start = time;
my $then = first_packet($s);
my $waited = time - $start;
is($then, 'nothing', 'then, saying nothing, it is closed without an ERR '
   . 'about the backend');
cmp_ok($waited, '>=', 1.8, sprintf 'at auth_timeout 2s, not connect_timeout '
       . '1s (%.2f s)', $waited);
ok(wait_for(sub { substr($t->error_log, $log_at)
                  =~ /client timed out in handshake/ },
            what => 'the timeout in the log'),
   'the log says "client timed out in handshake"');
unlike(substr($t->error_log, $log_at),
       qr/Can't connect to backend|backend failed/,
       'and nothing about the backend failing');

my $dbh = $t->dbh(port => $t->port(2));
ok($dbh, 'a normal client right after logs in') or diag($DBI::errstr);
is($dbh && $dbh->selectrow_array('SELECT @@server_id'), $primary_id,
   'on the primary, the first server: it was not marked down');
undef $dbh;

# The same for a client that stops halfway through its handshake response.
$s = raw_connect($t->port(2));
first_packet($s);
syswrite($s, "\x50\x00\x00\x01\x05");
is(first_packet($s), 'nothing', 'a client stalling in its handshake '
   . 'response is closed without an ERR about the backend');
close $s;
ok(!$t->grep_log(qr/Can't connect to backend|backend failed/),
   'no backend failure in the whole log');
