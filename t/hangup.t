#!/usr/bin/perl

# A peer's hang-up is noticed at once, whenever it comes: with the peer's
# last bytes in the same segment (an edge-triggered loop gets no second
# event for it), after the server killed the connection, in the middle of
# a handshake, and while the backend of a session is still connecting.
# Nothing here waits for a timeout: each deadline is far shorter than the
# timeout that would otherwise end the session.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::FakeBackend;
use Sluice::Wire qw(read_packet packet send_packet raw_connect parse_greeting
                    native_token handshake_response raw_login err_packet
                    hang_up wait_eof);

my $t = Sluice::Test->new;
$t->has('readconn');

# Port 9: a backend that accepts and never says a word.
my $mute = Sluice::FakeBackend->new(port => $t->port(9),
    script => [ 'silent' ]);
# Port 8: a backend that answers the first query with an ERR and its FIN
# in one segment, as a server does when a session is killed.
my $killer = Sluice::FakeBackend->new(port => $t->port(8),
    script => [ 'login', 'read', [ hang_up => packet(1,
        err_packet(1927, '70100', 'Connection was killed')) ] ]);

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream primary { server %%PRIMARY%% role=primary; }
    upstream mute { server 127.0.0.1:%%PORT_9%% role=primary; }
    upstream killer { server 127.0.0.1:%%PORT_8%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream primary;
        auth_timeout 30s;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream mute;
        connect_timeout 20s;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        auth passthrough;
        upstream mute;
        connect_timeout 20s;
        auth_timeout 30s;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        upstream killer;
    }
}
EOF
$t->run;
$t->plan(22);

my $root = $t->primary_dbh;

# --- data and FIN in one segment, after login --------------------------------

my $pl;
my $s = login();
my $id = query_value($s, 'SELECT CONNECTION_ID()');
ok($id && backend_alive($id), 'a session with its backend connection');
my $cport = $s->sockport;
# the header says 100 bytes, 10 follow, then the client is gone
hang_up($s, "\x64\0\0\0" . 'x' x 10);
ok(wait_for(sub { !backend_alive($id) }, timeout => 5,
            what => 'the backend connection to go'),
   'a partial packet and FIN: the backend connection goes away');
ok(session_log($cport, qr/client closed/),
   'the session says the client closed');

# --- the server kills the connection -----------------------------------------

# The server sends its ERR and its FIN back to back: the client must get
# both, without writing again.
$s = login(3);
send_packet($s, 0, "\x03SELECT 1");
$pl = (read_packet($s))[1];
ok(defined $pl && $pl =~ /^\xff\x87\x07/,
   'a server that sends ERR and FIN in one segment: the client gets the ERR');
ok(wait_eof($s, 3), 'then EOF at once');
ok(wait_for(sub { $killer->saw(qr/^closed 1$/) }, what => 'the fake'),
   'the fake backend hung up indeed');

$s = login();
$id = query_value($s, 'SELECT CONNECTION_ID()');
ok($id, 'a session to kill itself');
send_packet($s, 0, "\x03KILL CONNECTION_ID()");
$pl = (read_packet($s))[1];
ok(defined $pl && $pl =~ /^\xff/, 'KILL CONNECTION_ID(): the server\'s ERR');
ok(wait_eof($s, 3), 'then EOF at once');

$s = login();
$id = query_value($s, 'SELECT CONNECTION_ID()');
ok($id, 'a session to be killed from outside');
send_packet($s, 0, "\x03SELECT SLEEP(60)");
ok(wait_for(sub {
    $root->selectrow_array('SELECT COUNT(*) FROM information_schema'
        . ".PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'",
        undef, $id)
}, what => 'the query to run'), 'running a long query');
$root->do("KILL $id");
# the server may or may not say why before it hangs up: wait_eof drops it
ok(wait_eof($s, 3), 'KILL from another connection: EOF at once');

# --- half a handshake response, then FIN (auth_timeout is 30 s) ---------------

$s = raw_connect($t->port(0));
my $g = parse_greeting((read_packet($s))[1]);
ok($g, 'a greeting');
$cport = $s->sockport;
my $resp = handshake_response(user => 'app',
    token => native_token('secret', $g->{scramble}));
hang_up($s, substr(packet(1, $resp), 0, 20));
ok(session_log($cport, qr/connection closed by peer/),
   'half a handshake response and FIN: the session closes at once');

# --- the client leaves while the backend connects ----------------------------

# The mute backend keeps sluice waiting for its greeting for 20 s.
$s = raw_login($t->port(1));
ok(wait_for(sub { $mute->saw(qr/^accept 1$/) }, what => 'a backend'),
   'auth local: the backend is connecting');
$cport = $s->sockport;
close $s;
ok(wait_for(sub { $mute->saw(qr/^eof 1$/) }, timeout => 5,
            what => 'sluice to close the backend'),
   'the client hangs up: sluice closes the half-open backend at once');
ok(session_log($cport, qr/client closed/), 'saying the client closed');

# The login and the FIN in one segment: the session reaches the backend
# stage with the hang-up already seen, and no event will tell again.
$s = raw_connect($t->port(1));
$g = parse_greeting((read_packet($s))[1]);
$cport = $s->sockport;
hang_up($s, packet(1, handshake_response(user => 'app',
    token => native_token('secret', $g->{scramble}))));
ok(session_log($cport, qr/client closed/),
   'login and FIN together: closed at once too');
ok(wait_for(sub { $mute->saw(qr/^accept 2$/) ? $mute->saw(qr/^eof 2$/) : 1 },
            timeout => 5, what => 'the backend to go'),
   'with its backend');

# auth passthrough: the backend is chosen before the client says anything.
$s = raw_connect($t->port(2));
ok(wait_for(sub { $mute->saw(qr/^accept 3$/) }, what => 'a backend'),
   'passthrough: the backend is connecting');
$cport = $s->sockport;
close $s;
ok(wait_for(sub { $mute->saw(qr/^eof 3$/) }, timeout => 5,
            what => 'sluice to close the backend'),
   'the client hangs up: the backend is closed at once');
ok(session_log($cport, qr/client closed/), 'saying the client closed');


# --- helpers -----------------------------------------------------------------

# app/secret to port N (0); the socket, after the OK.
sub login {
    my ($n) = @_;
    my $c = raw_login($t->port($n // 0)) or die "no greeting\n";
    my (undef, $ok) = read_packet($c);
    die "login failed\n" unless defined $ok && $ok =~ /^\0/;
    return $c;
}

# The one value of a one-row, one-column query (the raw client does not
# ask for DEPRECATE_EOF: count, definition, EOF, row, EOF).
sub query_value {
    my ($c, $sql) = @_;
    send_packet($c, 0, "\x03$sql");
    my @p = map { (read_packet($c))[1] } 1 .. 5;
    return undef if grep { !defined } @p;
    return undef unless $p[0] eq "\x01" && $p[2] =~ /^\xfe/;
    return substr($p[3], 1, ord $p[3]);
}

sub backend_alive {
    my ($tid) = @_;
    return $root->selectrow_array('SELECT COUNT(*) FROM '
        . 'information_schema.PROCESSLIST WHERE ID = ?', undef, $tid);
}

# A line about the session of client port $port matching $re, within 3 s.
sub session_log {
    my ($port, $re) = @_;
    return wait_for(sub {
        grep { /client: 127\.0\.0\.1:$port,/ && $_ =~ $re }
            split /\n/, $t->error_log
    }, timeout => 3, what => "a log line matching $re");
}
