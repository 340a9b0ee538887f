#!/usr/bin/perl

# auth local: the proxy checks passwords itself (plain and hashed in the
# config), refuses wrong ones with the server's own wording and without
# opening a backend connection, switches clients that start with another
# plugin to mysql_native_password, and closes a session that sends garbage
# without disturbing the other sessions of its worker.  After all of that,
# with error_log at debug, neither the error log nor stderr holds a
# password, a password hash, or a scramble or token seen on the wire.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Digest::SHA qw(sha1);
use IO::Select;
use POSIX ();
use IO::Socket::INET;
use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_connect parse_greeting
                    native_token handshake_response read_err);

my $t = Sluice::Test->new;
$t->has('readconn');

# An account of its own, given to sluice only as its mysql.user hash.
my $hashed_user = $t->name . '_hashed';
my $hashed_pass = 'hashed-secret';
my $hash = $t->server_user($hashed_user, $hashed_pass);

# And one given to sluice in plaintext, with a password found nowhere else.
my $plain_user = $t->name . '_plain';
my $plain_pass = "Pl41n-$$-qZx";
$t->server_user($plain_user, $plain_pass);

my @scrambles;      # 20-byte scrambles sent to connect_greeted's clients
my @tokens;         # auth responses this test sent

# Port 1 leads to a backend that is only a listening socket of this test:
# whether sluice connected to it is there to see in its accept queue.
my $fake = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
    LocalPort => $t->port(8), Listen => 16, ReuseAddr => 1)
    or die "listen on port 8: $!\n";

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 64; }
mysql {
    user app { password "secret"; }
    user $hashed_user { password_hash "$hash"; }
    user $plain_user { password "$plain_pass"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    upstream fake { server 127.0.0.1:%%PORT_8%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream fake;
        connect_timeout 2s;
    }
}
EOF
$t->run;
$t->plan(47);

my $denied = "Access denied for user 'app'\@'127.0.0.1' (using password: %s)";

# --- the right password ------------------------------------------------------

my $dbh = $t->dbh;
ok($dbh, 'app/secret logs in through sluice (DBI)') or diag($DBI::errstr);
is($dbh && $dbh->selectrow_array('SELECT CURRENT_USER()'), 'app@%',
   'and the backend session is app');

my ($rc, $out, $err) = $t->mysql_cli(sql => 'SELECT CURRENT_USER(), 42');
is($rc, 0, 'app/secret logs in through sluice (mariadb client)')
    or diag($err);
is($out, "app\@%\t42\n", 'and runs a query');

# --- refused logins ----------------------------------------------------------

my $bad = $t->dbh(password => 'wrong');
ok(!$bad, 'a wrong password is refused');
is($DBI::err, 1045, 'with ERR 1045');
is($DBI::state, '28000', 'SQLSTATE 28000');
is($DBI::errstr, sprintf($denied, 'YES'), 'and the server\'s wording');

($rc, $out, $err) = $t->mysql_cli(password => 'wrong', sql => 'SELECT 1');
isnt($rc, 0, 'the mariadb client is refused too');
is($err, 'ERROR 1045 (28000): ' . sprintf($denied, 'YES') . "\n",
   'and prints the same error');

ok(!$t->dbh(user => 'nobody_' . $t->name, password => 'secret'),
   'an unknown user is refused');
is($DBI::err, 1045, 'with ERR 1045');
is($DBI::errstr, "Access denied for user 'nobody_" . $t->name
   . "'\@'127.0.0.1' (using password: YES)", 'naming that user');

ok(!$t->dbh(password => ''), 'no password is refused');
is($DBI::errstr, sprintf($denied, 'NO'), 'saying "using password: NO"');

ok(!$t->dbh(user => $hashed_user, password => 'secret'),
   'a password_hash user with a wrong password is refused');
is($DBI::err, 1045, 'with ERR 1045');

# The same refusals on port 1: sluice must not have connected to the fake
# backend for any of them.  The connect would be issued before the ERR is
# sent, and on loopback it lands in the accept queue at once.
my @refused = (
    [ 'a wrong password', password => 'wrong' ],
    [ 'an unknown user',  user => 'nobody', password => 'secret' ],
    [ 'no password',      password => '' ],
);
for my $r (@refused) {
    my ($what, %login) = @$r;
    ok(!$t->dbh(port => $t->port(1), %login) && $DBI::err == 1045,
       "$what is refused on the listener of the fake backend");
}
ok(!IO::Select->new($fake)->can_read(0.2),
   'and sluice opened no backend connection for them');
is($t->grep_log(qr/Access denied.*, backend: /), 0,
   'no refused session has a backend in its log lines');

# --- other plugins, and password_hash ----------------------------------------

my $off = length $t->error_log;
($rc, $out, $err) = $t->mysql_cli(sql => 'SELECT CURRENT_USER()',
    args => [ '--default-auth=caching_sha2_password' ]);
is($rc, 0, 'a client starting with caching_sha2_password logs in')
    or diag($err);
is($out, "app\@%\n", 'and runs a query');
my $new = substr($t->error_log, $off);
like($new, qr/\*\d+ authenticated, client: 127\.0\.0\.1:\d+, user: "app"/,
     'the error log shows that session authenticated');

my $h = $t->dbh(user => $hashed_user, password => $hashed_pass);
ok($h, 'a user configured with password_hash logs in') or diag($DBI::errstr);
is($h && $h->selectrow_array('SELECT CURRENT_USER()'), "$hashed_user\@%",
   'and the backend knows it as itself');
undef $h;

# The switch on the wire: caching_sha2_password in the response gets an
# AuthSwitchRequest for mysql_native_password with a fresh scramble.
my ($s, $g) = connect_greeted();
send_packet($s, 1, handshake_response(user => 'app', db => 'test',
    plugin => 'caching_sha2_password', token => 'x' x 32));
my ($seq, $pl) = read_packet($s);
my ($tag, $plugin, $data) = unpack 'C Z* a*', $pl // '';
ok(defined $pl && $tag == 0xfe && $seq == 2
   && $plugin eq 'mysql_native_password' && length($data) == 21,
   'AuthSwitchRequest to mysql_native_password with a 20-byte scramble');
push @scrambles, substr($data // '', 0, 20);
send_packet($s, 3, recorded_token('secret', substr($data // '', 0, 20)));
($seq, $pl) = read_packet($s);
ok(defined $pl && ord($pl) == 0 && $seq == 4,
   'the token computed on the new scramble is accepted with OK');
close $s;

# --- garbage instead of a handshake response ---------------------------------

ok($dbh && $dbh->do('SELECT 1'), 'a normal session is open on the worker');

# 200 random bytes in a well-formed packet: PROTOCOL_41 is set and no NUL
# ends the user name, so the parser fails the same way whatever the draw.
$off = length $t->error_log;
($s) = connect_greeted();
my $junk = join '', map { chr(1 + int rand 255) } 1 .. 200;
substr($junk, 1, 1) = chr(ord(substr $junk, 1, 1) | 0x02);
send_packet($s, 1, $junk);
my $e = read_err($s);
is($e && $e->{code}, 1043, 'garbage gets ERR 1043 Bad handshake');
ok(at_eof($s), 'and its session is closed');
close $s;
ok(logged_since($off,
       qr/bad handshake response: .*user name not NUL-terminated/),
   'the reason is logged');
is($dbh && $dbh->selectrow_array('SELECT 2'), 2,
   'the normal session still works');

# A right handshake response with the wrong sequence id.
$off = length $t->error_log;
($s, $g) = connect_greeted();
send_packet($s, 5, handshake_response(user => 'app',
    token => recorded_token('secret', $g->{scramble})));
$e = read_err($s);
is($e && $e->{code}, 1156, 'a wrong sequence id gets ERR 1156');
ok(at_eof($s), 'and its session is closed');
close $s;
ok(logged_since($off, qr/closing with error 1156: Got packets out of order/),
   'the reason is logged');

# A header announcing more than a handshake may take.
$off = length $t->error_log;
($s) = connect_greeted();
syswrite($s, pack('V', 0x01ffffff) . 'x' x 100);
ok(at_eof($s), 'a 16 MiB handshake packet is cut off');
close $s;
ok(logged_since($off, qr/handshake packet larger than buffer_size/),
   'the reason is logged');

is($dbh && $dbh->selectrow_array('SELECT 3'), 3,
   'the normal session still works');
($rc, $out) = $t->mysql_cli(sql => 'SELECT 4');
is($out, "4\n", 'and new sessions are served');

# --- the control: a right password does reach the fake backend ---------------

my $pid = fork // die "fork: $!\n";
if ($pid == 0) {
    my $c = $t->dbh(port => $t->port(1));
    POSIX::_exit(0);
}
ok(IO::Select->new($fake)->can_read(10),
   'a right password makes sluice connect to the backend (the check works)');
my $conn = $fake->accept;
close $conn if $conn;       # no greeting: sluice fails that session
waitpid($pid, 0);

# --- no secret in the logs ---------------------------------------------------

my $plain_dbh = $t->dbh(user => $plain_user, password => $plain_pass);
ok($plain_dbh && $plain_dbh->do('SELECT 1'),
   'a user configured with a plaintext password logs in')
    or diag($DBI::errstr);
undef $plain_dbh;
my $wrong_pass = "Wr0ng-$$-vKj";
ok(!$t->dbh(user => $plain_user, password => $wrong_pass)
   && $DBI::err == 1045, 'and a wrong password for it is refused');

# Stop sluice first: every line it had to write is in the files.
undef $dbh;
$t->stop;
my $logs = $t->error_log . ($t->read_file('stderr.log') // '');
# (error_log is at debug, from the test globals)
ok($logs =~ /authenticated, .*user: "\Q$plain_user\E"/
   && $logs =~ /error 1045: .*'\Q$plain_user\E'/,
   'the error log has those logins (the checks below look at them)');

my @secret;     # [ what, bytes ] never to be found in the logs
for my $pw ('secret', $hashed_pass, $plain_pass, $wrong_pass) {
    push @secret, [ "password '$pw'", $pw ],
        [ "SHA1('$pw') in hex", unpack('H*', sha1($pw)) ],
        [ "the hash of '$pw' in hex", unpack('H*', sha1(sha1($pw))) ];
}
push @secret, [ 'the configured password_hash', substr($hash, 1) ];
for my $i (0 .. $#scrambles) {
    push @secret, [ "scramble $i", $scrambles[$i] ],
        [ "scramble $i in hex", unpack('H*', $scrambles[$i]) ];
}
for my $i (0 .. $#tokens) {
    push @secret, [ "token $i", $tokens[$i] ],
        [ "token $i in hex", unpack('H*', $tokens[$i]) ];
}
cmp_ok(scalar @scrambles, '>=', 4, 'scrambles were captured on the wire');
my @found = map { $_->[0] }
    grep { index(lc $logs, lc $_->[1]) >= 0 } @secret;
is_deeply(\@found, [], 'the error log and stderr hold no password, hash, '
          . 'scramble or token');

$t->primary_dbh->do("DROP USER '$hashed_user'\@'%'");
$t->primary_dbh->do("DROP USER '$plain_user'\@'%'");


# --- a few bytes of the protocol ---------------------------------------------

# error.log past byte $off matches $re, within the usual deadline.
sub logged_since {
    my ($off, $re) = @_;
    return wait_for(sub { substr($t->error_log, $off) =~ $re },
                    what => "$re in the log");
}

# The peer closed: EOF, or a reset if it closed with bytes unread.
sub at_eof {
    my ($s) = @_;
    my $r = sysread($s, my $buf, 1);
    return defined $r ? $r == 0 : $!{ECONNRESET};
}

# A socket to port 0 and its greeting (see parse_greeting), whose
# scramble is recorded.
sub connect_greeted {
    my $s = raw_connect($t->port(0));
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or die "no greeting\n";
    push @scrambles, $g->{scramble};
    return ($s, $g);
}

# native_token($pw, $scramble), kept in @tokens for the check of the logs.
sub recorded_token {
    push @tokens, native_token(@_);
    return $tokens[-1];
}
