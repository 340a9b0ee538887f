#!/usr/bin/perl

# Reload under a running write load: a child process inserts through
# sluice over four connections (three TCP, one unix socket), each
# reconnecting every 50 statements so that sessions keep starting on the
# new workers, while the parent reloads five times with a changed config
# (worker_processes 1 <-> 2).  No statement and no connect may fail, every
# successful INSERT must be on the primary exactly once, and the old
# workers must go away.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(wait_exit slurp);

use constant {
    CONNS     => 4,
    PER_CONN  => 50,     # statements before a connection is reopened
    RELOADS   => 5,
    PROGRESS  => 100,    # rows to wait for after a reload
};

my $t = Sluice::Test->new;
$t->has('readconn');

my $dir = $t->testdir;
my $table = $t->name . '_load';

sub write_conf {
    my ($gen) = @_;
    my $workers = $gen % 2 ? 2 : 1;
    my $buf = $gen % 2 ? '32k' : '16k';
    my $conns = 100 + $gen;
    $t->write_file_expand('sluice.conf', <<"EOF");
worker_processes $workers;
worker_shutdown_timeout 10s;
events { worker_connections $conns; }
mysql {
    buffer_size $buf;
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen unix:%%TESTDIR%%/s.sock;
        router readconn;
        upstream cluster;
    }
}
EOF
    return $workers;
}

my $p = $t->primary_dbh;
$p->do("DROP TABLE IF EXISTS $table");
$p->do("CREATE TABLE $table (id INT AUTO_INCREMENT PRIMARY KEY, "
       . "conn INT NOT NULL, seq INT NOT NULL, UNIQUE (conn, seq))");

write_conf(0);
$t->run;
$t->plan(6 + 2 * RELOADS);

sub rows { $p->selectrow_array("SELECT COUNT(*) FROM $table") }

# --- the load ------------------------------------------------------------

# Runs until TESTDIR/stop exists (a flag file, not a signal: a signal
# would interrupt the client library in the middle of a statement), then
# writes its counts to TESTDIR/load.out.
sub load {
    my @where = ((map { +{ port => $t->port(0) } } 1 .. CONNS - 1),
                 { socket => "$dir/s.sock" });
    my (@dbh, @done, @seq, @errors);
    my ($ok, $failed, $connects) = (0, 0, 0);
    my $parent = getppid();
    # also stop when the test itself is gone (killed), not only when told
    until (-e "$dir/stop" || getppid() != $parent) {
        for my $i (0 .. CONNS - 1) {
            if (!$dbh[$i] || $done[$i] >= PER_CONN) {
                $dbh[$i]->disconnect if $dbh[$i];
                $done[$i] = 0;
                $connects++;
                $dbh[$i] = $t->dbh(%{ $where[$i] });
                if (!$dbh[$i]) {
                    $failed++;
                    push @errors, "connect $i: $DBI::errstr";
                    next;
                }
            }
            $done[$i]++;
            my $seq = ++$seq[$i];
            if ($dbh[$i]->do("INSERT INTO $table (conn, seq) VALUES (?, ?)",
                             undef, $i, $seq))
            {
                $ok++;
            } else {
                $failed++;
                push @errors, "insert $i/$seq: " . $dbh[$i]->errstr;
                $dbh[$i] = undef;
            }
        }
    }
    $_->disconnect for grep { defined } @dbh;
    splice @errors, 10 if @errors > 10;
    open(my $fh, '>', "$dir/load.tmp") or die "load.tmp: $!";
    print $fh "ok $ok\nfailed $failed\nconnects $connects\n",
        map { "error $_\n" } @errors;
    close $fh or die "load.tmp: $!";
    rename "$dir/load.tmp", "$dir/load.out" or die "load.out: $!";
}

my $child = fork // die "fork: $!";
if ($child == 0) {
    my $rc = eval { load(); 0 } // do { print STDERR "load: $@"; 1 };
    POSIX::_exit($rc);
}

# stops the load whatever happens to the parent
END { if ($child) { open my $fh, '>', "$dir/stop"; wait_exit($child, 30) } }

# --- reloads under the load ----------------------------------------------

# pids that accepted sessions, from the "accepted on" lines
sub accepting_pids {
    my %p = map { /\] (\d+): \*\d+ accepted on / ? ($1 => 1) : () }
        split /\n/, $t->error_log;
    return \%p;
}

my $started = wait_for(sub { rows() >= PROGRESS }, what => 'the load');
ok($started, 'the load runs');

my ($workers, @new);
for my $gen (1 .. RELOADS) {
    $workers = write_conf($gen);
    my %old = map { $_ => 1 } $t->worker_pids;
    my $before = rows();
    ok($t->reload, "reload $gen ($workers worker(s)) starts new workers");
    # the harness returns once one new worker runs; wait for all of them
    wait_for(sub { (@new = grep { !$old{$_} } $t->worker_pids) == $workers },
             what => "$workers new worker(s)");
    # the load goes on, and new sessions land on the new workers
    ok(wait_for(sub {
        my $acc = accepting_pids();
        rows() >= $before + PROGRESS && grep { $acc->{$_} } @new;
    }, what => "progress and sessions on the new workers of reload $gen"),
       "reload $gen: the load goes on, with sessions on the new workers");
}

open(my $fh, '>', "$dir/stop") or die "stop: $!";
close $fh;
ok(wait_exit($child, 30), 'the load stops');
my $st = Sluice::Sandbox::exit_status($child);
undef $child;
my %r = map { /^(\w+) (.*)$/ ? ($1 => $2) : () }
    grep { !/^error / } split /\n/, slurp("$dir/load.out") // '';
my @errors = grep { /^error / } split /\n/, slurp("$dir/load.out") // '';

is($r{failed}, 0, "no statement or connect failed ($r{ok} inserts, "
   . "$r{connects} connects)") or diag(join "\n", @errors);
is(rows(), $r{ok}, 'every successful INSERT is on the primary, once');

# old workers finish their sessions and exit: only the last ones remain
@new = sort { $a <=> $b } @new;
my $settled = wait_for(sub { "@{[ $t->worker_pids ]}" eq "@new" },
                       timeout => 15, what => "only the $workers new workers");
ok($settled, "the old workers exit, the $workers new one(s) remain")
    or diag('workers: ' . join(' ', $t->worker_pids) . "; new: @new");
is($st, 0, 'the load process exited cleanly');

$p->do("DROP TABLE $table");
