#!/usr/bin/perl

# A `password` given in plaintext is not kept in memory: after parsing,
# neither the master nor a worker holds the text anywhere in its readable
# memory (read through /proc/PID/mem), whether it was quoted, escaped,
# a bare word or in an included file; nor after a reload, nor after a
# reload that failed on a config error right after the password.  The
# same for `monitor_password`, in the monitor process too once it has
# logged in with it.  With `users_from`, the accounts' hashes ("*HEX",
# password-equivalent for a proxy) are not left as text in the monitor's
# memory (Connector/C's result and buffers) after a load.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');
plan skip_all => 'needs root to read /proc/PID/mem' if $>;

# The canaries share a prefix that nothing else in sluice's memory has.
my $CANARY = 'Pl41nt3xt-Canary';

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    user app { password "secret"; }
    user Us3r-Marker-8812 { password_hash ""; }
    user c1 { password "Pl41nt3xt-Canary-7319"; }
    user c2 { password "Pl41nt3xt-Canary-\"5555"; }
    include users.d/*.conf;
    upstream cluster {
        monitor_user pt_mon;
        monitor_password "Pl41nt3xt-Canary-mon9";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        users_from cluster;
    }
}
EOF
# a real account, so that the monitor logs in with the password
$t->primary_dbh->do("CREATE OR REPLACE USER 'pt_mon'\@'%' IDENTIFIED BY "
                    . "'Pl41nt3xt-Canary-mon9'");
$t->primary_dbh->do("GRANT SLAVE MONITOR ON *.* TO 'pt_mon'\@'%'");
$t->primary_dbh->do("GRANT SELECT ON mysql.global_priv TO 'pt_mon'\@'%'");
$t->primary_dbh->do("CREATE OR REPLACE USER 'pt_acct'\@'%' IDENTIFIED BY "
                    . "'Pl41nt3xt-Canary-acct'");
END { eval { $t->primary_dbh->do("DROP USER IF EXISTS 'pt_acct'\@'%'") } }
$t->write_file('users.d/c3.conf', "user c3 { password Pl41nt3xt-Canary-42; }\n");

sub mem_count { Sluice::Test::mem_count(@_) }

sub no_plaintext {
    my ($what) = @_;
    my $master = $t->master_pid;
    my @workers = $t->worker_pids;
    # the scan works: a user name, which is kept, is found in each
    ok(@workers && !grep({ mem_count($_, 'Us3r-Marker-8812') < 1 }
                         $master, @workers),
       "$what: the scan finds a user name in the master and the workers");
    is(mem_count($master, $CANARY), 0,
       "$what: the master's memory holds no plaintext password");
    is(join(' ', map { mem_count($_, $CANARY) } @workers),
       join(' ', map { 0 } @workers),
       "$what: the workers' memory holds none");
    # the monitor holds its connection open once logged in
    my @mon;
    ok(wait_for(sub {
           @mon = $t->role_pids('monitor');
           @mon == 1 && $t->primary_dbh->selectrow_array("SELECT COUNT(*) "
               . "FROM information_schema.processlist WHERE user = 'pt_mon'")
       }, what => 'the monitor logged in')
       && mem_count($mon[0], $CANARY) == 0,
       "$what: the monitor, logged in, holds none");
}

$t->run;
$t->plan(18);

my $dbh = $t->dbh;
ok($dbh && $dbh->do('SELECT 1'), 'a client logs in');
undef $dbh;
no_plaintext('started');

my %old = map { $_ => 1 } $t->worker_pids;
ok($t->reload, 'reload');
# an old worker exiting while its memory is read would fail the scan
wait_for(sub { !grep { $old{$_} } $t->worker_pids },
         what => 'the old workers to exit');
no_plaintext('after a reload');

# a second password in the same block fails the reload right after the
# first was read
my $good = $t->read_file('sluice.conf');
(my $bad = $good) =~ s/(user c1 \{ password "[^"]+";)/$1 password "x";/;
$t->write_file('sluice.conf', $bad);
my $off = length $t->error_log;
$t->signal('HUP');
ok(wait_for(sub { substr($t->error_log, $off) =~ /reload failed/ },
            what => 'the failed reload'),
   'a reload with a config error fails');
like(substr($t->error_log, $off), qr/user has more than one password/,
     'on the second password');
no_plaintext('after a failed reload');

# users_from: after a load, the monitor holds the account's hash as bytes
# in the zone, not as the text the server sent
my $hash = $t->primary_dbh->selectrow_array(
    "SELECT PASSWORD('Pl41nt3xt-Canary-acct')");
my $loads = () = $t->error_log =~ /accounts of upstream "cluster"/g;
ok($t->dbh(user => 'pt_acct', password => 'wrong') ? 0 : wait_for(sub {
       (() = $t->error_log =~ /accounts of upstream "cluster"/g) > $loads
   }, what => 'a load of the accounts'), 'a miss makes the monitor load');
my ($mon) = $t->role_pids('monitor');
is(mem_count($mon, $hash), 0,
   'the monitor keeps no hash text of the accounts it loaded');
