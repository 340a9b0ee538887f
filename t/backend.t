#!/usr/bin/perl

# Backends that misbehave: silent, refusing with an ERR, sending garbage or
# a header larger than buffer_size, hanging up in the middle of the login,
# and a passthrough client answering the server's auth switch with junk.
# Each time the client gets the right ERR (or, where the client is the one
# at fault, the session just ends), the session and its backend connection
# are closed, the log says why, and the worker goes on.  Then a server
# that refused is tried again after its 10 s hold-off, and a worker out of
# file descriptors pauses accepting and serves again once some are free.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Time::HiRes qw(time);
use Test::More;
use Sluice::Test;
use Sluice::FakeBackend;
use Sluice::Wire qw(read_packet send_packet packet raw_connect raw_login
                    parse_greeting native_token handshake_response read_err
                    err_packet wait_eof);

my $t = Sluice::Test->new;
$t->has('readconn');

use constant HOLD_OFF => 10;    # s, SLC_UPSTREAM_FAIL_MS

my $blocked = "Host '127.0.0.1' is blocked because of many connection errors";
my $switch = "\xfemysql_native_password\0" . ('s' x 20) . "\0";
my %fake = (
    silent   => [ 'silent' ],
    refuses  => [ [ packet => 0, err_packet(1129, 'HY000', $blocked) ] ],
    garbage  => [ [ send => packet(0, "not a MySQL server\n") ], 'silent' ],
    huge     => [ [ send => "\xff\xff\xff\0" . 'x' x 64 ], 'silent' ],
    midlogin => [ 'greeting', 'read', 'close' ],
    switch   => [ 'greeting', 'read', [ packet => 2, $switch ], 'silent' ],
);
my %port;
my $n = 10;
for my $name (sort keys %fake) {
    $port{$name} = $t->port($n++);
    $fake{$name} = Sluice::FakeBackend->new(port => $port{$name},
        script => $fake{$name});
}

my $conf = <<'EOF';
worker_processes 1;
events { worker_connections 1000; }
mysql {
    user app { password "secret"; }
    upstream primary { server %%PRIMARY%% role=primary; }
    # port 20 refuses at first; listed first, it wins the ties
    upstream comeback {
        server 127.0.0.1:%%PORT_20%% role=primary;
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        auth passthrough;
        upstream primary;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream comeback;
    }
EOF
$n = 2;
for my $name (sort keys %port) {
    $conf .= <<"EOF";
    upstream $name { server 127.0.0.1:$port{$name} role=primary; }
    server {
        listen 127.0.0.1:%%PORT_$n%%;
        router readconn;
        upstream $name;
        connect_timeout 1s;
        @{[ $name eq 'switch' ? 'auth passthrough;' : '' ]}
    }
EOF
    $port{"listen_$name"} = $t->port($n++);
}
$t->write_file_expand('sluice.conf', "$conf}\n");
$t->run;
$t->plan(39);

my @workers = $t->worker_pids;

# --- auth local: the backend fails the login ------------------------------

# Log in as app through the listener of fake $name: the ERR, the seconds
# it took, and whether the session then ended (EOF).
sub fail_login {
    my ($name) = @_;
    my $t0 = time;
    my $s = raw_login($port{"listen_$name"}) or return;
    my $e = read_err($s);
    return ($e, time - $t0, wait_eof($s, 3), $s->sockport);
}

# A line about the session of client port $cport matching $re, within 3 s.
sub session_log {
    my ($cport, $re) = @_;
    return wait_for(sub {
        grep { /client: 127\.0\.0\.1:$cport,/ && $_ =~ $re }
            split /\n/, $t->error_log
    }, timeout => 3, what => "a log line matching $re");
}

my ($e, $dt, $eof, $cport) = fail_login('silent');
is($e && $e->{code}, 1429, 'a silent backend: ERR 1429 after connect_timeout');
ok($dt < 4, 'within the deadline') or diag("took $dt s");
ok($eof, 'the session is closed');
ok(session_log($cport, qr/\[error\].*backend failed: handshake timed out/),
   'the log says the handshake timed out');
ok(wait_for(sub { $fake{silent}->saw(qr/^eof 1$/) }, timeout => 3,
            what => 'the backend to be closed'),
   'and the backend connection is closed');

($e, $dt, $eof, $cport) = fail_login('refuses');
is($e && "$e->{code} $e->{state}", '1129 HY000',
   'a backend answering ERR: the client gets its code');
is($e && $e->{msg}, $blocked, 'and its message');
ok($eof, 'the session is closed');
ok(session_log($cport, qr/\[error\].*backend refused: 1129 Host/),
   'the log says the backend refused');

($e, $dt, $eof, $cport) = fail_login('garbage');
is($e && $e->{code}, 1429, 'a greeting of garbage: ERR 1429');
ok($eof, 'the session is closed');
ok(session_log($cport, qr/\[error\].*backend failed: /),
   'the log says the backend failed');
ok(wait_for(sub { $fake{garbage}->saw(qr/^eof 1$/) }, timeout => 3,
            what => 'the backend to be closed'),
   'and the backend connection is closed');

($e, $dt, $eof, $cport) = fail_login('huge');
is($e && $e->{code}, 1429, 'a 16 MiB greeting header: ERR 1429');
ok($eof, 'the session is closed');
ok(session_log($cport,
       qr/\[error\].*backend failed: handshake packet larger than buffer_s/),
   'the log says the packet is larger than buffer_size');
ok(wait_for(sub { $fake{huge}->saw(qr/^eof 1$/) }, timeout => 3,
            what => 'the backend to be closed'),
   'and the backend connection is closed');

($e, $dt, $eof, $cport) = fail_login('midlogin');
is($e && $e->{code}, 1429, 'a backend hanging up in the login: ERR 1429');
like($e && $e->{msg}, qr/^Can't connect to backend server .*closed by peer/,
     'saying the backend closed');
ok($eof, 'the session is closed');
ok(session_log($cport,
       qr/\[error\].*backend failed: connection closed by peer/),
   'the log says the backend closed');

# --- auth passthrough: the client answers the auth switch with junk --------

# The real server: it switches a caching_sha2_password client to
# mysql_native_password, gets junk, and refuses.
my $s = raw_connect($t->port(0));
my $g = parse_greeting((read_packet($s))[1]);
send_packet($s, 1, handshake_response(user => 'app', token => 'x' x 32,
    plugin => 'caching_sha2_password'));
my ($seq, $pl) = read_packet($s);
ok(defined $pl && $pl =~ /^\xfemysql_native_password\0/ && $seq == 2,
   'passthrough: the server asks the client to switch');
$cport = $s->sockport;
send_packet($s, 3, "\x00\xff junk \x1b[0m" x 3);
$e = read_err($s);
# 1043 Bad handshake (a token that is not 20 bytes), or 1045
like($e && $e->{code}, qr/^104[35]\z/, 'junk for a token: the server\'s ERR');
ok(wait_eof($s, 3), 'the session is closed');
ok(session_log($cport, qr/\[warn\].*backend refused the login/),
   'the log says the backend refused');

# The fake: junk that is not even a packet, a header of 16 MiB.
$s = raw_connect($port{listen_switch});
$g = parse_greeting((read_packet($s))[1]);
send_packet($s, 1, handshake_response(user => 'app',
    token => native_token('secret', $g->{scramble})));
($seq, $pl) = read_packet($s);
is($pl, $switch, 'the fake backend\'s auth switch reaches the client');
$cport = $s->sockport;
syswrite($s, "\xff\xff\xff\x03" . "junk" x 16);
ok(wait_eof($s, 3), 'unframed junk: the session is closed');
ok(session_log($cport, qr/handshake packet larger than buffer_size/),
   'the log says why');
ok(wait_for(sub { $fake{switch}->saw(qr/^eof 1$/) }, timeout => 3,
            what => 'the backend to be closed'),
   'and the backend connection is closed');

is_deeply([ $t->worker_pids ], \@workers, 'the worker never died');
is($t->dbh(port => $t->port(0)) && 1, 1, 'and serves a new client');

# --- a refused server is tried again after its hold-off --------------------

$s = raw_login($t->port(1));
my $ok = $s && (read_packet($s))[1];
my $refused = time;
ok(defined $ok && $ok =~ /^\0/,
   'the first server refuses: the session logs in on the second');
ok($t->grep_log(qr/backend failed: Connection refused/),
   'the log says the first one refused');
close $s if $s;
my $back = Sluice::FakeBackend->new(port => $t->port(20),
    script => [ 'login', 'silent' ]);
# A session every 0.2 s until one reaches the server come back.
my $reached = wait_for(sub {
    my $c = raw_login($t->port(1)) or return 0;
    my (undef, $r) = read_packet($c);
    close $c;
    return $back->saw(qr/^accept/);
}, timeout => HOLD_OFF + 5, what => 'a session on the server come back');
my $after = time - $refused;
ok($reached, 'after its hold-off the server is tried again');
ok($after > HOLD_OFF - 1, 'not before') or diag("after $after s");
undef $back;

# --- out of file descriptors ----------------------------------------------

$t->stop;
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
worker_rlimit_nofile 64;
events { worker_connections 1000; }
mysql {
    user app { password "secret"; }
    upstream primary { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream primary;
        auth_timeout 60s;
        max_handshakes_per_host 0;     # these clients all log in late
    }
}
EOF
$t->allow_log(qr/accept4\(\) failed, pausing accept/);
$t->run;

my @held;
my $paused = 0;
while (@held < 200 && !$paused) {
    push @held, raw_connect($t->port(0));
    $paused = wait_for(sub { $t->grep_log(qr/pausing accept/) },
        timeout => 0.05) if @held > 40;
}
ok($paused, 'out of descriptors: the worker pauses accepting')
    or diag(scalar(@held) . ' clients connected');
ok(@held < 64, 'before 64 clients');
close $_ for @held;
@held = ();
ok(wait_for(sub { my $d = $t->dbh; $d && $d->selectrow_array('SELECT 7') },
            what => 'a client to be served again'),
   'once the clients are gone, a new one is served');
ok($t->master_pid && $t->worker_pids == 1, 'master and worker are alive');
