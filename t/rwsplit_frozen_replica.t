#!/usr/bin/perl

# Regression (issue 19, item 7): a read in flight on a replica that
# freezes waited as long as the replica was frozen.  Now a statement on a
# replica is given up once the monitor finds the replica down, or after
# replica_read_timeout: an autocommit read runs again on the primary
# (retry_failed_reads) and the client never hears of it; a statement that
# cannot run elsewhere (inside START TRANSACTION READ ONLY) gets a clear
# ERR 1927 naming the replica.  The replica is a real MariaDB frozen with
# SIGSTOP: a sandbox of this test's own, so that no other test sees it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my $sb = Sluice::Test::_private_sandbox();
$sb->start;
my $rpid = $sb->_running_pid('replica');
END { kill 'CONT', $rpid if $rpid }

my ($pp, $rp) = ($sb->port('primary'), $sb->port('replica'));
$t->write_file_expand('sluice.conf', <<"EOF2");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream watched {
        server 127.0.0.1:$pp role=primary;
        server 127.0.0.1:$rp role=replica;
        monitor_user monitor; monitor_password "monitor";
    }
    upstream unwatched {
        server 127.0.0.1:$pp role=primary;
        server 127.0.0.1:$rp role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream watched;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readwritesplit;
        upstream unwatched;
        replica_read_timeout 800ms;
    }
}
EOF2
$t->run;
$t->plan(11);

my $pid = $sb->admin_dbh('primary')->selectrow_array('SELECT @@server_id');
my $rid = $sb->admin_dbh('replica')->selectrow_array('SELECT @@server_id');
isnt($pid, $rid, 'two servers');

# a session whose replica backend is open; reads give up after 60 s
sub on_replica {
    my ($port) = @_;
    my $d = $t->dbh(port => $port, mariadb_read_timeout => 60);
    wait_for(sub { ($d->selectrow_array('SELECT @@server_id'))[0] == $rid },
             what => 'a read on the replica');
    return $d;
}

# SIGSTOP only asks: a thread running at that moment stops when it next
# enters the kernel, and a query that reaches it first is answered.
# Frozen is when every thread of the replica is stopped.
sub all_stopped {
    my @tasks = glob("/proc/$rpid/task/*/stat") or return 0;
    for my $f (@tasks) {
        open(my $fh, '<', $f) or return 0;
        my ($state) = (<$fh> // '') =~ /\)\s+(\S)/;
        return 0 unless defined $state && $state =~ /^[Tt]\z/;
    }
    return 1;
}
sub frozen {
    kill('STOP', $rpid)
        && wait_for(\&all_stopped, what => 'every thread of the replica '
                                          . 'stopped');
}
sub thawed {
    kill 'CONT', $rpid;
    my $r = $sb->admin_dbh('replica');
    return $r && $r->selectrow_array('SELECT 1');
}

# --- the monitor finds it down --------------------------------------------------

my $d = on_replica($t->port(0));
ok(frozen(), 'the replica is frozen (SIGSTOP)');
my @got = $d->selectrow_array('SELECT @@server_id, 7');
is_deeply(\@got, [ $pid, 7 ], 'a read sent to it is answered, by the primary')
    or diag($d->errstr);
like($t->error_log, qr/replica \S+ has not answered for \d+ ms and the monitor finds it down: given up/,
     'once the monitor found the replica down');
ok(thawed(), 'the replica thawed');

# --- replica_read_timeout, no monitor ----------------------------------------------

$d = on_replica($t->port(1));
ok(frozen(), 'the replica is frozen again');
@got = $d->selectrow_array('SELECT @@server_id, 8');
is_deeply(\@got, [ $pid, 8 ], 'without a monitor: answered by the primary')
    or diag($d->errstr);
like($t->error_log, qr/and replica_read_timeout: given up/,
     'after replica_read_timeout');
ok(thawed(), 'the replica thawed');

# --- what cannot run elsewhere gets a clear error ---------------------------------

$d = on_replica($t->port(1));
$d->do('START TRANSACTION READ ONLY');
frozen();
ok(!$d->selectrow_array('SELECT @@server_id, 9')
   && $d->err == 1927 && $d->errstr =~ /replica_read_timeout/,
   'inside a read-only transaction: ERR 1927 naming the timeout')
    or diag($d->err, ' ', $d->errstr);
ok(thawed(), 'the replica thawed');
$t->allow_log(qr/given up|dropped from the session|answered error/);
