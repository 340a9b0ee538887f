#!/usr/bin/perl

# Accounts from the servers (issue 9, section 2): with `users_from`, auth
# local knows every mysql_native_password account of the upstream's
# primary, none of them in the config.  The host that wins is the one
# the server would pick; an account created a moment ago logs in on the
# first try (the proxy reloads on a miss, at most once a second); an
# account with another plugin is refused with a message naming it; both
# readconn and readwritesplit serve these accounts; a reload keeps them.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_login native_token);

my $t = Sluice::Test->new;
$t->has('readconn', 'readwritesplit');

my $p = $t->primary_dbh;
my @accounts = ("'acc_u'\@'%'", "'acc_h'\@'127.0.0.1'", "'acc_h'\@'%'",
    "'acc_n'\@'127.0.0.0/255.0.0.0'", "'acc_n'\@'%'",
    "'acc_w'\@'127.0.0._'", "'acc_w'\@'127.%'", "'acc_new'\@'%'",
    "'acc_t'\@'1%'", "'acc_t'\@'%1'", "'acc_cu'\@'%'",
    "'acc_mon'\@'%'");
my $ed25519 = 0;
END {
    if ($p) {
        eval { $p->do("DROP USER IF EXISTS $_") } for @accounts;
        if ($ed25519) {
            eval {
                $p->do('SET sql_log_bin = 0');
                $p->do("DROP USER IF EXISTS 'acc_ed'\@'%'");
            };
        }
    }
}

my $mon_pass = 'Acc-M0n-77';
$p->do("CREATE OR REPLACE USER 'acc_mon'\@'%' IDENTIFIED BY ?", undef,
       $mon_pass);
# what the monitor needs for the accounts: SELECT on mysql.global_priv
$p->do("GRANT SLAVE MONITOR ON *.* TO 'acc_mon'\@'%'");
$p->do("GRANT SELECT ON mysql.global_priv TO 'acc_mon'\@'%'");

sub account {
    my ($acct, $pw) = @_;
    $p->do("CREATE OR REPLACE USER $acct IDENTIFIED BY ?", undef, $pw);
    $p->do("GRANT SELECT ON test.* TO $acct");
}
account("'acc_u'\@'%'", 'pw-u');
# the same user at two hosts: the more specific one wins, as on the server
account("'acc_h'\@'127.0.0.1'", 'specific');
account("'acc_h'\@'%'", 'generic');
account("'acc_n'\@'127.0.0.0/255.0.0.0'", 'netmask');
account("'acc_n'\@'%'", 'any');
account("'acc_w'\@'127.0.0._'", 'one');
account("'acc_w'\@'127.%'", 'many');
# a tie but for the literal prefix: the server's own sort decides
account("'acc_t'\@'1%'", 'prefix');
account("'acc_t'\@'%1'", 'suffix');
# readwritesplit reads as the client on the replica
wait_for(sub {
    $t->replica_dbh->selectrow_array(
        "SELECT COUNT(*) FROM mysql.user WHERE user = 'acc_w'") == 2;
}, what => 'the accounts on the replica');

my $conf = <<"EOF";
worker_processes 1;
mysql {
    upstream cluster {
        monitor_user acc_mon;
        monitor_password "$mon_pass";
        monitor_interval 200ms;
        server %%PRIMARY%% role=auto;
        server %%REPLICA%% role=auto;
    }
    # the brake on guessing would slow the flood below down: off here
    auth_failure_threshold 0;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        users_from cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream cluster;
        users_from cluster;
    }
}
EOF
$t->write_file_expand('sluice.conf', $conf);
$t->allow_log(qr/monitor|accounts/);
$t->run;
$t->plan(35);

sub loads {
    return scalar(() = $t->error_log
                  =~ /accounts of upstream "cluster": \d+ loaded/g);
}

ok(wait_for(sub { loads() >= 1 }, what => 'the first load'),
   'the monitor process loads the accounts at start');

sub login {
    my ($user, $pw, %o) = @_;
    return $t->dbh(user => $user, password => $pw, %o);
}

# --- log in with accounts the config does not name ---------------------

my $d = login('acc_u', 'pw-u');
ok($d, 'an account of the primary logs in, no password in the config')
    or diag($DBI::errstr);
is($d && $d->selectrow_array('SELECT CURRENT_USER()'), 'acc_u@%',
   'and the backend has it as itself');

ok(!login('acc_u', 'wrong'), 'a wrong password is refused');
is($DBI::err, 1045, 'with ERR 1045');

# --- the host the server would pick ------------------------------------

ok(login('acc_h', 'specific'), "'u'\@'127.0.0.1' wins over 'u'\@'%'");
ok(!login('acc_h', 'generic') && $DBI::err == 1045,
   "the password of 'u'\@'%' is refused then");
ok(login('acc_n', 'netmask'), "'u'\@'127.0.0.0/255.0.0.0' wins over "
   . "'u'\@'%'");
ok(!login('acc_n', 'any'), "and the other one's password is refused");
ok(login('acc_w', 'one'), "'u'\@'127.0.0._' wins over 'u'\@'127.%'");
ok(!login('acc_w', 'many'), "and the other one's password is refused");

# the server's choice, seen directly over TCP, and the proxy's agree
my %direct = map {
    my $h = DBI->connect('DBI:MariaDB:host=127.0.0.1;port='
        . $t->primary_port . ';database=test', 'acc_t', $_,
        { PrintError => 0, RaiseError => 0 });
    ($_ => $h ? 1 : 0);
} qw(prefix suffix);
my %proxy = map { ($_ => login('acc_t', $_) ? 1 : 0) } qw(prefix suffix);
ok($direct{prefix} + $direct{suffix} == 1, 'the server picks one of '
   . "'u'\@'1%' and 'u'\@'%1'");
is_deeply(\%proxy, \%direct, 'the proxy picks the same one');

# --- created a moment ago: the first try works ------------------------

account("'acc_new'\@'%'", 'fresh');
my $new = login('acc_new', 'fresh');
ok($new, 'an account created a moment ago logs in on the first try')
    or diag($DBI::errstr);
undef $new;

$p->do("DROP USER 'acc_new'\@'%'");
ok(!login('acc_new', 'fresh'), 'a dropped account cannot log in');
is($DBI::err, 1045, 'with ERR 1045');

# --- another plugin -----------------------------------------------------

SKIP: {
    my $have = eval {
        $p->selectrow_array("SELECT COUNT(*) FROM information_schema.plugins "
            . "WHERE plugin_name = 'ed25519'")
        || do { $p->do("INSTALL SONAME 'auth_ed25519'"); 1 };
    };
    skip 'no ed25519 plugin in this MariaDB', 2 unless $have;
    # not replicated: the replica may lack the plugin
    $p->do('SET sql_log_bin = 0');
    $p->do("CREATE OR REPLACE USER 'acc_ed'\@'%' IDENTIFIED VIA ed25519 "
        . "USING PASSWORD('edpw')");
    $p->do('SET sql_log_bin = 1');
    $ed25519 = 1;
    ok(!login('acc_ed', 'edpw'), 'an ed25519 account is refused');
    like($DBI::errstr, qr/'ed25519'/, 'with a message naming the plugin');
}

# --- COM_CHANGE_USER: the same lookup --------------------------------------

# Log in as acc_u, then COM_CHANGE_USER to `user`, answering the auth
# switch with `pw`: the first byte of the answer, and CURRENT_USER().
sub change_user {
    my ($user, $pw) = @_;
    my $s = raw_login($t->port(0), user => 'acc_u', password => 'pw-u');
    my (undef, $ok) = read_packet($s);
    return 'no login' unless defined $ok && ord($ok) == 0;
    send_packet($s, 0, "\x11$user\0\0test\0" . pack('v', 45)
        . "caching_sha2_password\0");
    my (undef, $sw) = read_packet($s);
    return 'no switch' unless defined $sw && ord($sw) == 0xfe;
    send_packet($s, 2, native_token($pw, substr($sw, 23, 20)));
    (undef, $ok) = read_packet($s);
    return 'err ' . unpack('x v', $ok) if ord($ok // "\xff") == 0xff;
    send_packet($s, 0, "\x03SELECT CURRENT_USER()");
    my ($who, $eofs) = ('?', 0);
    while (my (undef, $pl) = read_packet($s)) {
        $who = $1 if $pl =~ /(acc_\w+\@[\w.%]+)/;
        last if ord($pl) == 0xfe && length $pl < 9 && ++$eofs == 2;
        last if ord($pl) == 0xff;
    }
    return "ok $who";
}
is(change_user('acc_h', 'specific'), 'ok acc_h@127.0.0.1',
   'COM_CHANGE_USER to a loaded account, the host the server picks');
is(change_user('acc_h', 'generic'), 'err 1045',
   "COM_CHANGE_USER with the password of 'u'\@'%': ERR 1045");
account("'acc_cu'\@'%'", 'cu-fresh');
is(change_user('acc_cu', 'cu-fresh'), 'ok acc_cu@%',
   'COM_CHANGE_USER to an account created a moment ago: the first try');

# --- the rate limit ---------------------------------------------------------

# Bad logins from 8 clients at once, three each: every one asks for a
# load, but the monitor loads at most once a second.  A bad login just
# before makes a load, so the flood's first misses wait for the next one;
# while they wait (parked in the one worker), a good login is answered at
# once: the worker never blocks.
ok(!login('acc_u', 'wrong-0'), 'a bad login, which makes a load');
my $before = loads();
my $off = length $t->error_log;
my $t0 = time;
pipe(my $rd, my $wr) or die "pipe: $!";
my @kids;
for my $k (1 .. 8) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        close $rd;
        my $bad = 0;
        for my $i (1 .. 3) {
            my $h = DBI->connect('DBI:MariaDB:host=127.0.0.1;port='
                . $t->port(0), 'acc_u', "wrong$k",
                { PrintError => 0, RaiseError => 0 });
            $bad++ if !$h && ($DBI::err // 0) == 1045;
            syswrite($wr, time . "\n") if $i == 1;
        }
        POSIX::_exit($bad == 3 ? 0 : 1);
    }
    push @kids, $pid;
}
close $wr;
my $parked = wait_for(sub {
    my @w = substr($t->error_log, $off)
        =~ /login waits for a load of the accounts/g;
    @w >= 8;
}, timeout => 5, what => 'the bad logins parked');
ok(login('acc_u', 'pw-u'), 'a good login during the flood works');
my $good_at = time;
my @first = sort { $a <=> $b } map { chomp; $_ } <$rd>;
ok($parked && @first == 8 && $good_at < $first[0],
   'it is answered while 8 bad ones wait for the next load');
my $failed = 0;
for (@kids) { waitpid($_, 0); $failed++ if $? != 0 }
my $secs = time - $t0;
is($failed, 0, 'all 24 bad logins got ERR 1045');
my $n = loads() - $before;
ok($n >= 1 && $n <= int($secs) + 2,
   "the misses cause loads, at most one a second ($n loads in "
   . sprintf('%.1f', $secs) . ' s for 24 misses)');

# --- both routers ---------------------------------------------------------

my $rw = login('acc_u', 'pw-u', port => $t->port(1));
ok($rw, 'readwritesplit serves an account from users_from')
    or diag($DBI::errstr);
ok($rw && defined $rw->selectrow_array('SELECT @@server_id'),
   'and reads through it');

# --- reload ----------------------------------------------------------------

ok($d && $d->do('SELECT 1'), 'a session of a loaded account, at rest');
ok($t->reload, 'reload');
ok(wait_for(sub { $t->grep_log(
                qr{zone "mysql_accounts/cluster" .* carried over}) },
            what => 'the zone line'),
   'the accounts zone is carried over');
ok(login('acc_h', 'specific'), 'the accounts are there after a reload')
    or diag($DBI::errstr);
# handed over to the new worker, which checks the account again
ok(wait_for(sub { $t->grep_log(qr/handed over by process index/) },
            what => 'the handover'),
   'the session is handed over to the new worker');
is($d && $d->selectrow_array('SELECT CURRENT_USER()'), 'acc_u@%',
   'the session goes on in the new worker');

# --- secrets ------------------------------------------------------------

my $hash = $p->selectrow_array("SELECT PASSWORD('pw-u')");
ok(!$t->grep_log(qr/\Q$hash\E/) && $t->error_log !~ /pw-u/,
   'no hash and no password in the log');
