#!/usr/bin/perl

# A worker that dies without cleaning up (SIGKILL) leaves no backend
# connection counted in the shared stats: the master takes back what the
# dead process held when it reaps it, so max_connections does not stay
# full.  Covered: a worker of the running generation, the same after a
# reload (the zones are carried over), and an old-generation worker
# killed while it drains its sessions after a reload.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
plan skip_all => 'no readconn' unless $t->has_module('readconn');

# a long shutdown timeout: an old worker keeps its sessions after a reload
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
worker_shutdown_timeout 1m;
mysql {
    user app { password "secret"; }
    upstream capped { server %%PRIMARY%% role=primary max_connections=2; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream capped;
    }
}
EOF
$t->run;
$t->plan(15);

# two sessions that hold the two slots of max_connections=2
sub fill {
    my ($what) = @_;
    my @s = map { $t->dbh } 1 .. 2;
    ok((grep { $_ && $_->do('SELECT 1') } @s) == 2,
       "$what: two sessions are open");
    ok(!$t->dbh, "$what: a third is refused");
    is($DBI::err, 1040, "$what: with ERR 1040");
    return @s;
}

# a new client gets in within a deadline
sub gets_in {
    my ($what) = @_;
    ok(wait_for(sub { my $d = $t->dbh; $d && $d->selectrow_array('SELECT 1') },
                what => "a session after $what"),
       "$what: a new client gets in, the dead worker's slots were "
       . 'given back');
}

my $off = length $t->error_log;

# --- a worker of the running generation ------------------------------------

my @held = fill('running worker');
$t->kill_worker;
gets_in('running worker killed');
my $taken = qr/\[notice\] \d+: worker process index \d+ held 2 backend /
            . qr/connection\(s\) of "capped\/127\.0\.0\.1:\d+", released/;
like(substr($t->error_log, $off), qr/$taken/,
     'running worker killed: the master logs what it took back');
@held = ();

# --- the same after a reload ------------------------------------------------

ok($t->reload, 'a reload with the same config');
@held = fill('after reload');
$t->kill_worker;
gets_in('after reload, worker killed');
@held = ();

# --- an old-generation worker, killed while it drains -----------------------

@held = fill('draining');
my ($old) = $t->worker_pids;
ok($t->reload, 'draining: a reload, the old worker keeps its sessions');
$t->kill_worker(pid => $old, wait => 0);
gets_in('draining: the old worker killed');
@held = ();
