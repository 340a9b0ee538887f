#!/usr/bin/perl

# A read must be answered while the topology changes (issue 19): after
# SET GLOBAL read_only=1 on the primary, a switchover's first step, a
# new readwritesplit session found no primary and its read failed.  Here
# a switchover both ways, each step seen by the monitor (role=auto),
# under a read load of new sessions and of sessions kept open: no read
# gets an error.  A session that finds no primary starts on a replica,
# and one that finds no server at all (the new primary not promoted yet)
# waits for the monitor to see one.
#
# The sandbox is shared by the tests that follow: whatever happens here,
# its topology is put back at the end (the primary writable, the replica
# read_only and replicating from it).  The sandbox's replica writes no
# binary log, so the old primary pointed at it cannot replicate (its IO
# thread stops with error 1236): while the replica is the primary, the
# old one is a stopped replica, which no session is given.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my ($P, $R) = ($t->primary, $t->replica);
my @readers;                # pids
my $stop = $t->testdir . '/stop';
my $restore = 0;

sub change_master {
    my ($dbh, $port) = @_;
    $dbh->do("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$port, "
        . "MASTER_USER='repl', MASTER_PASSWORD='repl', "
        . 'MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1');
}

# Each statement on its own: one that fails (STOP SLAVE on a server that
# is no replica) must not keep the others from running.
sub try_all {
    my ($dbh, @sql) = @_;
    for my $q (@sql) {
        ref $q ? eval { $q->($dbh) } : eval { $dbh->do($q) };
    }
}

sub restore_topology {
    my $p = eval { $t->primary_dbh } or return;
    my $r = eval { $t->replica_dbh } or return;
    try_all($p, 'STOP SLAVE', 'RESET SLAVE ALL', 'SET GLOBAL read_only = OFF');
    try_all($r, 'SET GLOBAL read_only = ON', 'STOP SLAVE', 'RESET SLAVE ALL',
            sub { change_master($_[0], $t->primary_port) }, 'START SLAVE');
    my $pos = $p->selectrow_array('SELECT @@gtid_binlog_pos');
    wait_for(sub {
        my $st = eval { $r->selectrow_hashref('SHOW SLAVE STATUS') } // {};
        ($st->{Slave_IO_Running} // '') eq 'Yes'
            && ($st->{Slave_SQL_Running} // '') eq 'Yes'
            && ($r->selectrow_array('SELECT MASTER_GTID_WAIT(?, 0)',
                                    undef, $pos) // -1) == 0;
    }, timeout => 30, what => 'the replica replicating from the primary');
}

END {
    if (@readers) {
        open(my $fh, '>', $stop);
        kill 'KILL', @readers;
        waitpid($_, 0) for @readers;
    }
    restore_topology() if $restore;
}

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 200; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=auto;
        server %%REPLICA%% role=auto;
        monitor_user monitor;
        monitor_password "monitor";
        monitor_interval 50ms;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream cluster;
        # how long a new session waits for a server (and its login
        # with it): longer than the test takes between two steps, on a
        # loaded machine too
        connect_timeout 30s;
        auth_timeout 30s;
    }
}
EOF
$t->run;
$t->plan(15);

my $off = 0;
sub seen {
    my ($re, $what) = @_;
    my $ok = wait_for(sub { substr($t->error_log, $off) =~ $re },
                      what => $what);
    $off = length $t->error_log;
    return $ok;
}

ok(seen(qr{monitor: server "cluster/\Q$R\E" is now replica}s,
        'the roles seen')
   && $t->error_log =~ qr{monitor: server "cluster/\Q$P\E" is now primary},
   'the monitor sees the primary and the replica');

# --- the read load -----------------------------------------------------------
# a reader logs one line per read: "ok", or what failed

sub reader {
    my ($name, $fresh) = @_;
    my $pid = fork // die "fork: $!";
    return $pid if $pid;
    open(my $out, '>>', $t->testdir . "/$name") or POSIX::_exit(1);
    $out->autoflush(1);
    my $d;
    until (-e $stop) {
        $d //= $t->dbh;
        if (!$d) {
            print $out "error at connect: $DBI::errstr\n";
            next;
        }
        my ($v) = $d->selectrow_array('SELECT @@global.read_only');
        print $out defined $v ? "ok\n"
                              : 'error ' . $d->err . ': ' . $d->errstr . "\n";
        if ($fresh || !defined $v) {
            $d->disconnect;
            undef $d;
        }
    }
    POSIX::_exit(0);
}

my %fresh = (new1 => 1, new2 => 1, kept1 => 0, kept2 => 0);
sub reads {
    my ($name) = @_;
    return scalar(() = ($t->read_file($name) // '') =~ /\n/g);
}

# every reader of @names reads at least 5 more times
sub reading {
    my (@names) = @_;
    my %at = map { $_ => reads($_) } @names;
    return wait_for(sub { !grep { reads($_) < $at{$_} + 5 } @names },
                    what => "reads by @names");
}

$restore = 1;
push @readers, reader($_, $fresh{$_}) for sort keys %fresh;
ok(reading(keys %fresh), 'reads through the proxy, in new sessions and '
   . 'kept ones');

# --- over to the replica ----------------------------------------------------------

my $p = $t->primary_dbh;
my $r = $t->replica_dbh;
$p->do('SET GLOBAL read_only = ON');
ok(seen(qr{monitor: server "cluster/\Q$P\E" is now none}, 'no primary'),
   'the primary turns read_only: the monitor sees no primary');
ok(reading(keys %fresh), 'reads go on while there is no primary');
my $start = 'no primary server of upstream "cluster": the session starts '
    . "on replica $R";
ok($t->error_log =~ /\Q$start\E/, 'a new session starts on the replica');

$r->do($_) for 'STOP SLAVE', 'RESET SLAVE ALL', 'SET GLOBAL read_only = OFF';
ok(seen(qr{monitor: server "cluster/\Q$R\E" is now primary}, 'R promoted'),
   'the replica promoted: the monitor sees it primary');
ok(reading(keys %fresh), 'reads go on, the replica primary');

change_master($p, $t->replica_port);
$p->do('START SLAVE');
ok(seen(qr{monitor: server "cluster/\Q$P\E" is now replica}, 'P replica'),
   'the old primary pointed at the new one: the monitor sees it replica');
ok(reading(keys %fresh), 'reads go on, the roles swapped');

# --- and back ---------------------------------------------------------------------

$r->do('SET GLOBAL read_only = ON');
ok(seen(qr{monitor: server "cluster/\Q$R\E" is now none}, 'R read_only'),
   'the new primary turns read_only: no primary again');
# the old primary does not replicate (see the top): no server takes a new
# session now, which waits for one; the kept ones read on
ok(reading(qw(kept1 kept2)), 'kept sessions read on while no server is '
   . 'primary or replica');
ok(wait_for(sub { $t->error_log =~ /waiting for the monitor to see one/ },
            what => 'a new session waiting'),
   'a new session waits for the monitor to see a server');

$p->do($_) for 'STOP SLAVE', 'RESET SLAVE ALL', 'SET GLOBAL read_only = OFF';
ok(seen(qr{monitor: server "cluster/\Q$P\E" is now primary}, 'P promoted'),
   'the old primary promoted again');
change_master($r, $t->primary_port);
$r->do('START SLAVE');
ok(seen(qr{monitor: server "cluster/\Q$R\E" is now replica}, 'R replica')
   && reading(keys %fresh), 'the replica replicates again, reads go on');

open(my $fh, '>', $stop) or die "$stop: $!";
close $fh;
waitpid($_, 0) for @readers;
@readers = ();
my @bad = map { my $n = $_; map { "$n: $_" } grep { $_ ne 'ok' }
                split /\n/, $t->read_file($n) // '' } sort keys %fresh;
my $n = 0;
$n += reads($_) for keys %fresh;
ok(!@bad, "no read got an error ($n reads)")
    or diag(join "\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)]);
