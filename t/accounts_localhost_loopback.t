#!/usr/bin/perl

# 'u'@'localhost' over loopback TCP (issue 19, item 5).  A server with
# skip_name_resolve OFF (MariaDB's default) names a TCP client at
# 127.0.0.1 or ::1 `localhost`, without DNS, and lets it in as an account
# that exists only as 'u'@'localhost'; sluice with users_from refused it
# with ERR 1045.  Now the monitor reads skip_name_resolve with the
# accounts and a loopback client matches as the server would match it,
# and the access-denied messages name the host the server names.
#
# Both settings against real servers, each compared with the server
# reached directly over TCP from 127.0.0.1: the shared sandbox runs with
# skip_name_resolve ON, a private one (this test's own) with it OFF.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use DBI;
use IO::Socket::IP;
use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session change_user);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my $off = Sluice::Test::_private_sandbox(
    mariadbd_args => ['--skip-name-resolve=OFF']);
$off->start;

# setting => { primary and replica root handles, primary port }
my %srv = (
    ON  => { p => $t->primary_dbh, r => $t->replica_dbh,
             port => $t->primary_port },
    OFF => { p => $off->admin_dbh('primary'),
             r => $off->admin_dbh('replica'),
             port => $off->port('primary') },
);
my $has_v6 = IO::Socket::IP->new(Listen => 1, LocalHost => '::1',
                                 LocalPort => 0) ? 1 : 0;

# Only the shared sandbox outlives this test: its accounts are dropped.
my @accounts = ("'lo_mon'\@'%'", "'lo_u'\@'localhost'",
    "'lo_both'\@'localhost'", "'lo_both'\@'%'");
END {
    if (my $p = $srv{ON}{p}) {
        eval { $p->do("DROP USER IF EXISTS $_") } for @accounts;
    }
}

my $mon_pass = 'Lo-M0n-19';
for my $s (values %srv) {
    my $p = $s->{p};
    $p->do("CREATE OR REPLACE USER 'lo_mon'\@'%' IDENTIFIED BY ?", undef,
           $mon_pass);
    $p->do("GRANT SLAVE MONITOR ON *.* TO 'lo_mon'\@'%'");
    $p->do("GRANT SELECT ON mysql.global_priv TO 'lo_mon'\@'%'");
    # the issue's account: at localhost only
    $p->do("CREATE OR REPLACE USER 'lo_u'\@'localhost' IDENTIFIED BY ?",
           undef, 'lo-pw');
    $p->do("GRANT SELECT ON test.* TO 'lo_u'\@'localhost'");
    # at localhost and anywhere, two passwords: which one wins depends on
    # whether the client is `localhost`
    $p->do("CREATE OR REPLACE USER 'lo_both'\@'localhost' IDENTIFIED BY ?",
           undef, 'at-localhost');
    $p->do("CREATE OR REPLACE USER 'lo_both'\@'%' IDENTIFIED BY ?", undef,
           'anywhere');
    $p->do("GRANT SELECT ON test.* TO 'lo_both'\@'$_'") for '%', 'localhost';
}
# a table lo_u writes to through sluice, in this test's sandbox only
$srv{OFF}{p}->do('CREATE TABLE test.lo_t (i INT)');
$srv{OFF}{p}->do("GRANT INSERT ON test.lo_t TO 'lo_u'\@'localhost'");
for my $set (sort keys %srv) {
    # readwritesplit reads as the client on the replica
    wait_for(sub {
        $srv{$set}{r}->selectrow_array("SELECT COUNT(*) FROM mysql.user "
            . "WHERE user IN ('lo_mon', 'lo_u', 'lo_both')") == 4;
    }, what => "the accounts on the replica ($set)");
}

my $v6_listen = $has_v6 ? 'listen [::1]:%%PORT_2%%;' : '';
my ($off_p, $off_r) = ($off->port('primary'), $off->port('replica'));
$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
mysql {
    # the brake on guessing would only slow the wrong passwords down
    auth_failure_threshold 0;
    upstream on {
        monitor_user lo_mon;
        monitor_password "$mon_pass";
        monitor_interval 200ms;
        server %%PRIMARY%% role=auto;
        server %%REPLICA%% role=auto;
    }
    upstream off {
        monitor_user lo_mon;
        monitor_password "$mon_pass";
        monitor_interval 200ms;
        server 127.0.0.1:$off_p role=auto;
        server 127.0.0.1:$off_r role=auto;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream on;
        users_from on;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        $v6_listen
        router readwritesplit;
        upstream off;
        users_from off;
    }
}
EOF
$t->allow_log(qr/monitor|accounts/);
$t->run;
$t->plan(28);
$srv{ON}{proxy} = $t->port(0);
$srv{OFF}{proxy} = $t->port(1);

# --- the premise: what each server says, and what the monitor read ------

is($srv{ON}{p}->selectrow_array('SELECT @@skip_name_resolve'), 1,
   'the shared sandbox runs with skip_name_resolve ON');
is($srv{OFF}{p}->selectrow_array('SELECT @@skip_name_resolve'), 0,
   "this test's sandbox with the server's default, OFF");
for my $set (qw(ON OFF)) {
    my $up = lc $set;
    ok(wait_for(sub {
        $t->grep_log(qr/accounts of upstream "$up": \d+ loaded from .*, /
                     . qr/skip_name_resolve \Q$set\E\)/);
    }, what => "the first load of \"$up\""),
       "the monitor reads skip_name_resolve $set with the accounts");
}

# --- one login, directly and through sluice -------------------------------

# What a login over TCP ends in: "ok CURRENT_USER()" or "err CODE MESSAGE".
sub outcome {
    my ($dsn, $user, $pw) = @_;
    my $h = DBI->connect("DBI:MariaDB:$dsn;database=test", $user, $pw,
                         { PrintError => 0, RaiseError => 0 });
    return 'err ' . ($DBI::err // '?') . ' ' . ($DBI::errstr // '?')
        unless $h;
    my $who = $h->selectrow_array('SELECT CURRENT_USER()');
    return 'ok ' . ($who // 'no answer: ' . ($h->errstr // '?'));
}
sub direct {
    my ($set, @login) = @_;
    return outcome("host=127.0.0.1;port=$srv{$set}{port}", @login);
}
sub proxy {
    my ($set, @login) = @_;
    return outcome("host=127.0.0.1;port=$srv{$set}{proxy}", @login);
}

# skip_name_resolve OFF: the client at 127.0.0.1 is `localhost`
is(direct(OFF => 'lo_u', 'lo-pw'), 'ok lo_u@localhost',
   "OFF: the server lets a loopback TCP client in as 'u'\@'localhost'");
is(proxy(OFF => 'lo_u', 'lo-pw'), 'ok lo_u@localhost',
   'so does sluice, and the backend has it as that account');
{
    my $d = DBI->connect("DBI:MariaDB:host=127.0.0.1;port=$srv{OFF}{proxy}"
        . ';database=test', 'lo_u', 'lo-pw',
        { PrintError => 0, RaiseError => 0 });
    # the write runs on the primary, the read (once replicated) on the
    # replica: both backends take the client as 'lo_u'@'localhost'
    ok($d && $d->do('INSERT INTO lo_t VALUES (19)'),
       'and its statements run: a write')
        or diag($d ? $d->errstr : $DBI::errstr);
    ok(wait_for(sub {
        ($d && $d->selectrow_array('SELECT i FROM lo_t') // 0) == 19;
    }, what => 'the row read through sluice'), 'and a read');
}
my $denied = "err 1045 Access denied for user 'lo_u'\@'localhost' "
    . '(using password: YES)';
is(direct(OFF => 'lo_u', 'wrong'), $denied,
   "OFF: a wrong password: the server names 'u'\@'localhost'");
is(proxy(OFF => 'lo_u', 'wrong'), $denied, 'sluice says the same');
is(proxy(OFF => 'lo_nobody', 'x'), direct(OFF => 'lo_nobody', 'x'),
   'an unknown user: the same message as the server, naming localhost');
like(proxy(OFF => 'lo_nobody', 'x'), qr/'lo_nobody'\@'localhost'/,
     '(which names localhost)');
# the more specific entry for the client the server sees
is(direct(OFF => 'lo_both', 'at-localhost'), 'ok lo_both@localhost',
   "OFF: 'u'\@'localhost' wins over 'u'\@'%' for a loopback client");
is(proxy(OFF => 'lo_both', 'at-localhost'), 'ok lo_both@localhost',
   'in sluice too');
is(proxy(OFF => 'lo_both', 'anywhere'), direct(OFF => 'lo_both', 'anywhere'),
   "and the password of 'u'\@'%' is refused by both alike");

# skip_name_resolve ON: the client is its address only
my $on_denied = "err 1045 Access denied for user 'lo_u'\@'127.0.0.1' "
    . '(using password: YES)';
is(direct(ON => 'lo_u', 'lo-pw'), $on_denied,
   "ON: the server refuses 'u'\@'localhost' over TCP, naming the address");
is(proxy(ON => 'lo_u', 'lo-pw'), $on_denied, 'so does sluice, alike');
is(direct(ON => 'lo_both', 'anywhere'), 'ok lo_both@%',
   "ON: 'u'\@'%' is the loopback client's account");
is(proxy(ON => 'lo_both', 'anywhere'), 'ok lo_both@%', 'in sluice too');
is(proxy(ON => 'lo_both', 'at-localhost'),
   direct(ON => 'lo_both', 'at-localhost'),
   "and the password of 'u'\@'localhost' is refused by both alike");

# --- COM_CHANGE_USER names the same host ---------------------------------

# Log in as app, COM_CHANGE_USER to lo_u with a wrong password: the ERR.
sub change_err {
    my ($port) = @_;
    my $rs = raw_session($port, db => 'test') or return 'no login';
    my $r = change_user($rs, user => 'lo_u', password => 'wrong',
                        db => 'test');
    return !$r ? 'connection lost'
         : $r->{err} ? "err $r->{err}{code} $r->{err}{msg}" : 'ok';
}
for my $set (qw(OFF ON)) {
    my $direct = change_err($srv{$set}{port});
    like($direct, qr/^err 1045 /,
         "$set: COM_CHANGE_USER with a wrong password, directly: 1045");
    is(change_err($srv{$set}{proxy}), $direct,
       "$set: through sluice, the same message");
}

# --- ::1 --------------------------------------------------------------------

SKIP: {
    skip 'no ::1 to listen on', 3 unless $has_v6;
    # DBD::MariaDB wants an IPv6 host in brackets
    my $dsn = 'host=[::1];port=' . $t->port(2);
    is(outcome($dsn, 'lo_u', 'lo-pw'), 'ok lo_u@localhost',
       "OFF: a client at ::1 logs in as 'u'\@'localhost'");
    is(outcome($dsn, 'lo_u', 'wrong'), $denied,
       'a wrong password from ::1 names localhost too');
    is(outcome($dsn, 'lo_both', 'at-localhost'), 'ok lo_both@localhost',
       "and 'u'\@'localhost' wins over 'u'\@'%' for it");
}

# --- what the log says ----------------------------------------------------

ok(!$t->grep_log(qr/cannot read \@\@skip_name_resolve/),
   'the setting was read without an error');

