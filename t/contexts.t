#!/usr/bin/perl

# Module contexts: a directive set in mysql {} is inherited by every
# server {} that does not set it, and a server's own value wins.  Shown
# with the mysql module's idle_timeout and readconn's readconn_role, both
# filled by the generic slot setters into the module's own conf and
# completed by its merge_conf hook; then with auth, server_version,
# max_handshakes, max_handshakes_per_host and auth_failure_threshold
# (behaviour), auth_failure_delay and auth_failure_max_delay (sluice -t,
# which checks that a server's delay is not above its maximum), and a bad
# value in mysql {} failing sluice -t with its file:line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Socket qw(SO_RCVTIMEO);
use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet parse_greeting greeting_of
                    native_token handshake_response);

my $t = Sluice::Test->new;
$t->has('readconn');

# the mysql-level values come after the server blocks on purpose: the
# merge runs once the whole file is parsed
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream both {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream both;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream both;
        idle_timeout 0;
        readconn_role primary;
    }
    idle_timeout 1s;
    readconn_role replica;
}
EOF
$t->run;
$t->plan(29);

# the server with its own values first, so its session is idle the longer
my $own = $t->dbh(port => $t->port(1));
my $inherits = $t->dbh(port => $t->port(0));

is($inherits && $inherits->selectrow_array('SELECT @@server_id'), 2,
   'a server without readconn_role takes mysql {}\'s: replica');
is($own && $own->selectrow_array('SELECT @@server_id'), 1,
   'a server with its own readconn_role keeps it: primary');

my $t0 = time;
ok(wait_for(sub { $t->grep_log(qr/closed after idle_timeout/) },
            timeout => 10, what => 'the idle session to be closed'),
   'a server without idle_timeout takes mysql {}\'s 1s');
cmp_ok(time - $t0, '>=', 0.5, 'not at once');
ok(!defined $inherits->selectrow_array('SELECT 2'),
   'that client finds its connection closed');
is($own->selectrow_array('SELECT 3'), 3,
   'the server with its own idle_timeout 0 left its (longer idle) session '
   . 'open');
undef $own;                 # so that sluice can stop without waiting
$t->stop;

# --- the server {} directives of the mysql module ------------------------

# Port 2 inherits everything (auth passthrough), port 3 everything but
# auth, port 4 sets its own values, port 5 its own max_handshakes.  Each
# passthrough server has an upstream of its own, so that their backend
# handshakes are counted apart (per upstream server).
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream p2 { server %%PRIMARY%% role=primary; }
    upstream p3 { server %%PRIMARY%% role=primary; }
    upstream p5 { server %%PRIMARY%% role=primary; }
    auth passthrough;
    server_version "5.5.5-10.99.1-contexts";
    max_handshakes 1;
    max_handshakes_per_host 2;
    auth_failure_threshold 1;
    auth_failure_delay 1500ms;
    auth_failure_max_delay 1500ms;
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        upstream p2;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        upstream p3;
        auth local;
    }
    server {
        listen 127.0.0.1:%%PORT_4%%;
        router readconn;
        upstream p3;
        auth local;
        server_version "8.0.99-own";
        max_handshakes_per_host 0;
        auth_failure_threshold 0;
    }
    server {
        listen 127.0.0.1:%%PORT_5%%;
        router readconn;
        upstream p5;
        max_handshakes 2;
    }
}
EOF
$t->run;

# A socket to port N from local address $from (one address per check:
# handshakes and failed logins are counted per client address).
sub connect_from {
    my ($n, $from) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
        PeerPort => $t->port($n), LocalAddr => $from, Timeout => 5)
        or die "connect to port $n from $from: $!\n";
    $s->sockopt(SO_RCVTIMEO, pack('l!l!', 10, 0));
    return $s;
}

# The first packet of each of $k clients from $from that say nothing:
# "greeting" or "ERR <code>: <message>"; the sockets stay open as long as
# the caller keeps the second value.
sub silent_clients {
    my ($n, $from, $k) = @_;
    my (@socks, @got);
    for (1 .. $k) {
        my $s = connect_from($n, $from);
        my (undef, $pl) = read_packet($s);
        push @got, !defined $pl ? 'nothing'
            : ord($pl) == 0x0a ? 'greeting'
            : ord($pl) == 0xff ? sprintf('ERR %d: %s', unpack 'x v x x5 a*',
                                         $pl)
            : 'other';
        push @socks, $s;
    }
    return (\@got, \@socks);
}

# Logs in as app with $password from $from: 'OK' or the ERR code.
sub login_from {
    my ($n, $from, $password) = @_;
    my $s = connect_from($n, $from);
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or return 'no greeting';
    send_packet($s, 1, handshake_response(user => 'app',
        token => native_token($password, $g->{scramble})));
    (undef, $pl) = read_packet($s);
    return 'nothing' unless defined $pl && length $pl;
    return ord($pl) == 0 ? 'OK' : ord($pl) == 0xff ? unpack('x v', $pl)
                                                    : 'other';
}

# auth: an account only the backend knows logs in through the server that
# inherits passthrough, not through the one with its own auth local.
my $user = 'ctx_' . $t->name;
$t->server_user($user, 'x');
my $pt = $t->dbh(port => $t->port(2), user => $user, password => 'x');
is($pt && $pt->selectrow_array('SELECT CURRENT_USER()'), "$user\@%",
   'auth passthrough in mysql {}: a server without auth passes through')
    or diag($DBI::errstr);
undef $pt;
ok(!$t->dbh(port => $t->port(3), user => $user, password => 'x'),
   'a server with its own auth local does not know that account');
my $local = $t->dbh(port => $t->port(3));
is($local && $local->selectrow_array('SELECT 1'), 1,
   'and logs in the users of its config');
undef $local;

# server_version: the greeting of each server.
my $backend = parse_greeting(greeting_of($t->primary_port))->{version};
is(parse_greeting(greeting_of($t->port(2)))->{version}, $backend,
   'the passthrough server relays the backend\'s greeting');
is(parse_greeting(greeting_of($t->port(3)))->{version},
   '5.5.5-10.99.1-contexts',
   'a local server without server_version greets with mysql {}\'s');
is(parse_greeting(greeting_of($t->port(4)))->{version}, '8.0.99-own',
   'a server with its own server_version greets with it');

# max_handshakes (passthrough): backend handshakes per backend server.
my ($got, $socks) = silent_clients(2, '127.0.0.2', 2);
is($got->[0], 'greeting', 'max_handshakes 1 from mysql {}: one client '
   . 'in its handshake');
like($got->[1], qr/^ERR 1040: Too many connections \(max_handshakes: 1 /,
     'the next one is refused');
($got, $socks) = silent_clients(5, '127.0.0.3', 2);
is("@$got", 'greeting greeting',
   'a server with its own max_handshakes 2 takes two');

# max_handshakes_per_host: clients of one address in their handshake.
($got, $socks) = silent_clients(3, '127.0.0.4', 3);
is("@$got[0, 1]", 'greeting greeting',
   'max_handshakes_per_host 2 from mysql {}: two clients of one address');
like($got->[2], qr/^ERR 1040: .* \(max_handshakes_per_host: 2 /,
     'the third is refused');
($got, $socks) = silent_clients(4, '127.0.0.5', 3);
is("@$got", 'greeting greeting greeting',
   'a server with its own max_handshakes_per_host 0 takes all three');
undef $socks;

# auth_failure_threshold 1 and auth_failure_delay 1500ms from mysql {}:
# the second failure in a row is answered late (the defaults, 3 and 1 s,
# would answer it at once).
sub delayed { scalar $t->grep_log(qr/answer to the login delayed/) }

is(login_from(3, '127.0.0.6', 'wrong'), 1045, 'a wrong password');
my $t1 = time;
is(login_from(3, '127.0.0.6', 'wrong'), 1045, 'and another');
cmp_ok(time - $t1, '>=', 1.4, 'is answered after mysql {}\'s '
       . 'auth_failure_delay, its auth_failure_threshold being 1');
ok($t->grep_log(qr/delayed by 1500 ms after 1 failed logins/),
   'the log says so');
my $n = delayed();
is(join(' ', map { login_from(4, '127.0.0.7', 'wrong') } 1 .. 3),
   '1045 1045 1045', 'three wrong passwords to the server with '
   . 'auth_failure_threshold 0');
is(delayed(), $n, 'are answered without delay');

# --- sluice -t: auth_failure_delay and _max_delay ------------------------

# mysql {} sets one of the two, a server {} maybe the other: a server's
# delay may not be above its maximum, checked with the merged values.
my $dir = $t->testdir;
sub check_conf {
    my ($name, $mysql, $server) = @_;
    $t->write_file($name, <<"EOF");
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    $mysql
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
        $server
    }
}
EOF
    return $t->test_config(conf => $name);
}

my ($rc, $out) = check_conf('delay.conf', 'auth_failure_delay 5s;', '');
like($out, qr/^sluice:\ \[emerg\]\ \Q$dir\E\/delay\.conf:5:
              \ "auth_failure_delay"\ is\ above\ "auth_failure_max_delay"$/mx,
     'auth_failure_delay 5s in mysql {} reaches the server: above the '
     . 'default maximum, 4s') or diag($out);
($rc, $out) = check_conf('delay-max.conf', 'auth_failure_delay 5s;',
                         'auth_failure_max_delay 10s;');
is($rc, 0, 'a server raising its own auth_failure_max_delay is fine')
    or diag($out);
($rc, $out) = check_conf('max.conf', 'auth_failure_max_delay 500ms;', '');
like($out, qr/^sluice:\ \[emerg\]\ \Q$dir\E\/max\.conf:5:
              \ "auth_failure_delay"\ is\ above\ "auth_failure_max_delay"$/mx,
     'auth_failure_max_delay 500ms in mysql {} reaches the server: below '
     . 'the default delay, 1s') or diag($out);
($rc, $out) = check_conf('max-delay.conf', 'auth_failure_max_delay 500ms;',
                         'auth_failure_delay 100ms;');
is($rc, 0, 'a server lowering its own auth_failure_delay is fine')
    or diag($out);

# A bad value in mysql {} fails with its own file:line.
($rc, $out) = check_conf('bad.conf', 'max_handshakes many;', '');
like($out, qr/^sluice:\ \[emerg\]\ \Q$dir\E\/bad\.conf:4:\ invalid\ value
              \ "many"\ in\ "max_handshakes"\ directive,
              \ it\ must\ be\ a\ non-negative\ integer$/mx,
     'a bad max_handshakes in mysql {} names its line') or diag($out);
