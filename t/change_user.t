#!/usr/bin/perl

# COM_CHANGE_USER under auth local is checked against the proxy's users
# exactly as a login is: a real client's change_user() (Python mysqlclient,
# libmariadb underneath) to a configured user with the right password
# works, and the session then runs as that user on its backend; an
# account the proxy does not know (root with an empty password, which the
# server would accept from the proxy's host) or a wrong password gets
# ERR 1045 and the session goes on as it was; after three refusals the
# command is refused outright (ERR 1047), as the server does.  Under auth
# passthrough the server checks it.  COM_RESET_CONNECTION keeps working.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_login native_token);

my $t = Sluice::Test->new;
$t->has('readconn');
my $py = '/usr/bin/python3';
$t->need(system($py, '-c', 'import MySQLdb') == 0,
         'no Python mysqlclient (contrib/deps.sh installs python3-mysqldb)');

my $other = $t->name . '_other';
$t->server_user($other, 'other-pw');
my $p = $t->primary_dbh;

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 64; }
mysql {
    user app { password "secret"; }
    user $other { password "other-pw"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        auth passthrough;
    }
}
EOF
$t->run;
$t->plan(14);

# Log in as app through `port`, then change_user(user, pw) for each pair
# of @changes; after each, print "ok CURRENT_USER()" or "err CODE".
sub py_change {
    my ($port, @changes) = @_;
    my $script = <<'PY';
import sys, MySQLdb
c = MySQLdb.connect(host='127.0.0.1', port=int(sys.argv[1]), user='app',
                    passwd='secret', db='test')
args = sys.argv[2:]
for i in range(0, len(args), 2):
    try:
        c._conn.change_user(args[i], args[i + 1], 'test') \
            if hasattr(c, '_conn') else c.change_user(args[i], args[i + 1], 'test')
        out = 'ok'
    except MySQLdb.OperationalError as e:
        out = 'err %d' % e.args[0]
    try:
        cur = c.cursor()
        cur.execute('SELECT CURRENT_USER()')
        out += ' ' + cur.fetchone()[0]
    except Exception as e:
        out += ' dead'
    print(out, flush=True)
PY
    $t->write_file('cu.py', $script);
    my $pid = open(my $fh, '-|', $py, $t->testdir . '/cu.py', $port, @changes)
        or return ();
    my @out = map { chomp; $_ } <$fh>;
    close $fh;
    return @out;
}

my @r = py_change($t->port(0), 'app', 'secret', $other, 'other-pw');
is($r[0], 'ok app@%', "mysqlclient change_user() to the same user with its "
    . 'password works through auth local');
is($r[1], "ok $other\@%", 'and to another configured user: the backend '
    . 'session is now that user');
ok($t->grep_log(qr/changed user to "\Q$other\E"/), 'the change is logged');

@r = py_change($t->port(0), 'root', '', 'app', 'wrong');
is($r[0], 'err 1045 app@%', 'root with an empty password (not a proxy user):'
    . ' ERR 1045, the session stays app');
is($r[1], 'err 1045 app@%', 'a wrong password: ERR 1045, the session stays');
ok($t->grep_log(qr/COM_CHANGE_USER refused: Access denied for user 'root'/),
    'the refusal is logged with the user asked for');
ok(!$p->selectrow_array("SELECT COUNT(*) FROM information_schema"
    . ".processlist WHERE user = 'root' AND host LIKE '127.0.0.1:%'"),
    'no backend session of root was opened through sluice');

@r = py_change($t->port(0), 'x', 'y', 'x', 'y', 'x', 'y', 'app', 'secret');
is($r[3], 'err 1047 app@%', 'after three refusals COM_CHANGE_USER is '
    . 'refused outright (ERR 1047), as the server does');

# --- raw: the proxy's scramble, an auth switch, a reset ------------------

# A client that asks for another plugin is switched to
# mysql_native_password with the session's scramble.
my $s = raw_login($t->port(0));
my (undef, $ok) = read_packet($s);
my $scramble;
{
    # the greeting's scramble is what the token answers: read it from a
    # fresh login of our own
    $s = Sluice::Wire::raw_connect($t->port(0));
    my (undef, $g) = read_packet($s);
    my $gg = Sluice::Wire::parse_greeting($g);
    $scramble = $gg->{scramble};
    send_packet($s, 1, Sluice::Wire::handshake_response(user => 'app',
        token => native_token('secret', $scramble)));
    (undef, $ok) = read_packet($s);
}
is(ord($ok // "\xff"), 0, 'a raw session logs in');
my $caps_pkt = "\x11" . "$other\0" . "\0" . "test\0" . pack('v', 45)
    . "caching_sha2_password\0";
send_packet($s, 0, $caps_pkt);
my ($seq, $sw) = read_packet($s);
ok(defined $sw && ord($sw) == 0xfe && $sw =~ /^\xfemysql_native_password\0/,
    'COM_CHANGE_USER with another plugin: an auth switch to '
    . 'mysql_native_password');
my $scr2 = substr($sw // '', 23, 20);
send_packet($s, 2, native_token('other-pw', $scr2));
(undef, $ok) = read_packet($s);
is(ord($ok // "\xff"), 0, 'the right token for it: OK');
send_packet($s, 0, "\x1f");                         # COM_RESET_CONNECTION
(undef, $ok) = read_packet($s);
is(ord($ok // "\xff"), 0, 'COM_RESET_CONNECTION: OK');
send_packet($s, 0, "\x03SELECT CURRENT_USER()");
my (@pk, $eofs);
while (my ($sq, $pl) = read_packet($s)) {
    push @pk, $pl;
    last if ord($pl) == 0xfe && length $pl < 9 && ++$eofs == 2;
}
ok((grep { /\Q$other\E\@%/ } @pk), 'the session runs as the new user');

# --- passthrough: the server checks it ------------------------------------

@r = py_change($t->port(1), $other, 'other-pw');
is($r[0], "ok $other\@%", 'change_user through auth passthrough works');
