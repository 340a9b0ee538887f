#!/usr/bin/perl

# How workers are scheduled: SCHED_BATCH by default (worker_sched_policy
# batch), SCHED_OTHER when configured, worker_priority as their nice
# value; the master keeps SCHED_OTHER and its own nice value, and a reload
# gives the new workers the new settings.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(slurp);

use constant { SCHED_OTHER => 0, SCHED_BATCH => 3 };

my $t = Sluice::Test->new;
$t->has('readconn');

my $CONF = <<'EOF';
worker_processes 2;
%%SCHED%%
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
}
EOF

sub write_conf {
    my ($sched) = @_;
    (my $c = $CONF) =~ s/%%SCHED%%/$sched/;
    $t->write_file_expand('sluice.conf', $c);
}

# (policy, nice) of a process, from /proc/PID/stat (fields 41 and 19)
sub sched_of {
    my ($pid) = @_;
    my $stat = slurp("/proc/$pid/stat") // return (-1, -100);
    $stat =~ s/^.*\)\s+//s;             # fields from 3 on
    my @f = split ' ', $stat;
    return ($f[41 - 3], $f[19 - 3]);
}

sub all_workers_are {
    my ($policy, $nice, $what) = @_;
    my @w = $t->worker_pids;
    my @bad = grep { my ($p, $n) = sched_of($_); $p != $policy || $n != $nice }
              @w;
    ok(@w == 2 && !@bad, $what)
        or diag(join ', ', map { "$_: " . join('/', sched_of($_)) } @w);
}

$t->plan(7);

write_conf('');
$t->run;
all_workers_are(SCHED_BATCH, 0, 'by default both workers are SCHED_BATCH');
my ($mp, $mn) = sched_of($t->master_pid);
is($mp, SCHED_OTHER, 'the master stays SCHED_OTHER');
my $dbh = $t->dbh(port => $t->port(0));
is($dbh && $dbh->selectrow_array('SELECT 40 + 2'), 42,
   'a batch worker serves queries');
$dbh->disconnect if $dbh;

write_conf("worker_sched_policy other;\nworker_priority 5;");
ok($t->reload, 'reload with worker_sched_policy other, worker_priority 5');
ok(wait_for(sub { $t->worker_pids == 2
                  && !grep { (sched_of($_))[0] != SCHED_OTHER }
                     $t->worker_pids }, timeout => 10,
            what => 'the old workers to go'),
   'only new workers remain');
all_workers_are(SCHED_OTHER, 5, 'the new workers are SCHED_OTHER at nice 5');
is((sched_of($t->master_pid))[1], $mn, 'the master\'s nice value is its own');


