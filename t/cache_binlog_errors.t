#!/usr/bin/perl

# The binlog reader's error paths (issue 21): an account without
# REPLICATION SLAVE (the monitor's, by default), a wrong binlog_password,
# a binlog_server_id that is the replica's or the primary's own.  Each is
# logged with the reason, the reader never gets live (no hit is served
# under bypass, counted, and every read is answered by the server), it
# invalidates nothing wholesale for it, and the replica's own connection
# to the primary is never taken over.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache', 'readconn');

my $p = $t->primary_dbh;
my $r = $t->replica_dbh;
my $pw = 'B1nlog-Errors-5';
Sluice::Test::binlog_account($p, 'binlog_err_mon', $pw);
my $rid = $r->selectrow_array('SELECT @@server_id');
my $pid = $p->selectrow_array('SELECT @@server_id');
$p->do('CREATE OR REPLACE TABLE test.ble (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.ble VALUES (1, 1)');

my %body = (
    nogrant   => '',                                   # the monitor's
    badpw     => 'binlog_user binlog_err_mon; binlog_password "wrong";',
    replicaid => "binlog_user binlog_err_mon; binlog_password \"$pw\"; "
                 . "binlog_server_id $rid;",
    primaryid => "binlog_user binlog_err_mon; binlog_password \"$pw\"; "
                 . "binlog_server_id $pid;",
);
my @ups = sort keys %body;
my ($conf, $i) = ('', 0);
for my $u (@ups) {
    $conf .= <<"EOF";
    upstream $u {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
        binlog on; $body{$u}
    }
    server { listen 127.0.0.1:%%PORT_$i%%; router readconn; upstream $u;
             filters cache; cache qc; cache_ttl 600s; }
EOF
    $i++;
}
$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
$conf
}
EOF
$t->run;
$t->plan(4 * 3 + 2);
$t->allow_log(qr/binlog "\w+": /);

my %reason = (
    nogrant   => qr/(?:the account needs|the) REPLICATION SLAVE/,
    badpw     => qr/Access denied for user 'binlog_err_mon'/,
    replicaid => qr/binlog_server_id $rid is used by replica/,
    primaryid => qr/binlog_server_id $pid is the primary's own/,
);
sub com_select { Sluice::Test::server_status($p, 'Com_select') }

for my $k (0 .. $#ups) {
    my $u = $ups[$k];
    ok(wait_for(sub { $t->grep_log(qr/binlog "$u": .*$reason{$u}/) },
                what => "the reason of $u"), "$u: logged with the reason");
    my $d = $t->dbh(port => $t->port($k));
    my $served = 0;
    for (1 .. 3) {
        my $c0 = com_select();
        my ($v) = $d->selectrow_array('SELECT v FROM ble WHERE id = 1');
        $served += ($v // 0) == 1 && com_select() - $c0 == 1;
    }
    is($served, 3, "$u: never live, so every read is the server's");
    my $st = $t->binlog_stats($u);
    is("$st->{state} $st->{all_position}", 'starting 0',
       "$u: its state says so, and it invalidated nothing wholesale");
}

cmp_ok($t->cache_stats('qc')->{binlog_bypass}, '>=', 12,
       'the skipped lookups are counted');
my $slave = $r->selectrow_hashref('SHOW SLAVE STATUS');
ok($slave->{Slave_IO_Running} eq 'Yes'
   && !$t->grep_log(qr/same server_uuid\/server_id/),
   'the replica still replicates: its server id was never taken');
