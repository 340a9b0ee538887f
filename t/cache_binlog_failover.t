#!/usr/bin/perl

# The binlog reader across the primary's troubles (issue 21): the primary
# restarted (no hit while the reader is lost, then it resumes from the
# same position), a position the primary has purged (everything
# invalidated once, logged and counted, then it reads from the primary's
# current position), and a switchover to the replica (it follows the
# monitor's new primary and resumes from the same GTID position, without
# invalidating everything).  Servers are killed, purged and promoted, so
# this test has a sandbox of its own, whose replica keeps a binlog.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Sandbox;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $sb = Sluice::Test::_private_sandbox(replica_binlog => 1);
$sb->start;
my ($pport, $rport) = ($sb->port('primary'), $sb->port('replica'));
my $p = $sb->admin_dbh('primary');
my $bl_pass = 'B1nlog-Failover-2';
Sluice::Test::binlog_account($p, 'binlog_mon', $bl_pass);
$p->do('CREATE TABLE test.fo (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.fo VALUES (1, 1)');

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        server 127.0.0.1:$pport role=auto;
        server 127.0.0.1:$rport role=auto;
        binlog on;
        binlog_user binlog_mon; binlog_password "$bl_pass";
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        readconn_role primary;
        upstream db;
        filters cache;
        cache qc;
        cache_ttl 600s;
    }
}
EOF
$t->run;
$t->plan(19);
$t->allow_log(qr/binlog "db": |monitor: /);

ok(wait_for(sub { $t->grep_log(qr/binlog "db": live/) },
            what => 'the reader live'), 'the binlog reader is live');

# the server a root handle of $role's is now
sub dbh_of { $sb->admin_dbh($_[0]) }
sub com_select { Sluice::Test::server_status(dbh_of($_[0]), 'Com_select') }

my $d;
sub app { $d = $t->dbh unless $d && $d->ping; return $d }

# [value, reads the server $role answered]
sub read1 {
    my ($role) = @_;
    my $c0 = com_select($role);
    my ($v) = app()->selectrow_array('SELECT v FROM fo WHERE id = 1');
    return [$v, com_select($role) - $c0];
}
sub cached {
    my ($role, $want) = @_;
    return wait_for(sub { my $g = read1($role);
                          $g->[1] == 0 && ($g->[0] // '') eq $want },
                    timeout => 20, what => "a hit with $want");
}
sub sees {
    my ($role, $want) = @_;
    return wait_for(sub { (read1($role)->[0] // '') eq $want },
                    timeout => 20, what => "a read of $want");
}

sub binlog_stats { $t->binlog_stats('db') }

# --- the primary restarted ---------------------------------------------------

ok(cached('primary', 1), 'a cached read');
my $off = length $t->error_log;
ok($sb->stop_server('primary'), 'the primary is stopped');
ok(wait_for(sub { substr($t->error_log, $off) =~ /binlog "db": lost/ },
            what => 'the reader to notice'), 'the reader is lost');
$sb->start_server('primary');
$p = dbh_of('primary');
ok(wait_for(sub { substr($t->error_log, $off) =~ /binlog "db": live/ },
            timeout => 20, what => 'the reader live again'),
   'once the primary is back, the reader is live again');
unlike(substr($t->error_log, $off), qr/everything invalidated/,
       'from the same position: nothing invalidated wholesale');
$p->do('UPDATE test.fo SET v = 2');
ok(sees('primary', 2), 'a direct write after the restart invalidates');

# --- a purged position -------------------------------------------------------

ok(cached('primary', 2), 'a cached read');
my $st = binlog_stats();
ok(kill('STOP', $st->{pid}), 'the reader is stopped');
sub dumps {
    return map { $_->{Id} } grep { ($_->{User} // '') eq 'binlog_mon' }
        @{ $p->selectall_arrayref('SHOW PROCESSLIST', { Slice => {} }) };
}
$p->do("KILL $_") for dumps();
ok(wait_for(sub { !dumps() }, what => 'its dump thread gone'),
   'its connection is killed');
$p->do('UPDATE test.fo SET v = 3');
$p->do('FLUSH BINARY LOGS');
my $last = ($p->selectrow_array('SHOW MASTER STATUS'))[0];
# (a file the replica's dump thread still reads is kept: it moves on to
# the new one as soon as it has read the old one's end)
ok(wait_for(sub {
    $p->do("PURGE BINARY LOGS TO '$last'");
    my @f = map { $_->[0] } @{ $p->selectall_arrayref('SHOW BINARY LOGS') };
    return "@f" eq $last;
}, what => 'the old binlogs purged'), 'the binlog before the write is purged');
$off = length $t->error_log;
kill 'CONT', $st->{pid};
ok(wait_for(sub { substr($t->error_log, $off)
                      =~ /binlog "db": resuming at .*everything invalidated/ },
            timeout => 20, what => 'the reader to start afresh'),
   'its position purged, the reader starts from the current one, '
   . 'everything invalidated');
ok(sees('primary', 3), 'the write it could not read is not served stale');
cmp_ok(binlog_stats()->{all_position}, '>=', 1, 'counted: all_position');

# --- a switchover to the replica ---------------------------------------------

my $r = dbh_of('replica');
my $pos = $p->selectrow_array('SELECT @@global.gtid_binlog_pos');
ok(wait_for(sub { $r->selectrow_array('SELECT @@global.gtid_slave_pos')
                  eq $pos }, timeout => 20, what => 'the replica in step'),
   'the replica holds everything');
ok(cached('primary', 3), 'a cached read');
$st = binlog_stats();
$off = length $t->error_log;
$p->do('SET GLOBAL read_only = ON');
$r->do('STOP SLAVE');
$r->do('RESET SLAVE ALL');
$r->do('SET GLOBAL read_only = OFF');
ok(wait_for(sub { substr($t->error_log, $off)
                      =~ /binlog "db": reading 127\.0\.0\.1:$rport from/ },
            timeout => 20, what => 'the reader on the new primary'),
   'the reader follows the monitor to the new primary');
unlike(substr($t->error_log, $off), qr/everything invalidated/,
       'from the same GTID position: nothing invalidated wholesale');
undef $d;           # a new session, to the new primary
$r->do('UPDATE test.fo SET v = 4');
ok(sees('replica', 4), 'a direct write on the new primary invalidates');
