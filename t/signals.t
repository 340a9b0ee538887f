#!/usr/bin/perl

# Process control by signal and by `sluice -s`: a killed worker is
# replaced, USR1 / -s reopen reopen the logs, -s reload / -s quit go
# through the pid file, a broken config on HUP keeps the running one,
# QUIT lets an open transaction finish (and refuses new clients), TERM
# stops at once, `daemon on` detaches and stops with -s stop,
# `master_process off` serves in one process and stops with -s stop, and
# a reload carries the shared counters over, so max_connections holds
# across it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Errno qw(ECONNREFUSED);
use IO::Socket::INET;
use IO::Socket::UNIX;
use Time::HiRes qw(time);
use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(spawn wait_exit pid_alive proc_cmdline slurp);

my $t = Sluice::Test->new;
$t->has('readconn');

my $dir = $t->testdir;
my $sock = "$dir/s.sock";
my $table = $t->name . '_quit';

my $CONF = <<'EOF';
worker_processes 2;
worker_shutdown_timeout %%TIMEOUT%%;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen unix:%%TESTDIR%%/s.sock;
        router readconn;
        upstream cluster;
        %%EXTRA%%
    }
}
EOF

# sluice.conf with the test globals; EXTRA goes into the server block
sub write_conf {
    my (%o) = @_;
    my $c = $CONF;
    $c =~ s/%%TIMEOUT%%/$o{timeout} \/\/ '1s'/e;
    $c =~ s/%%EXTRA%%/$o{extra} \/\/ ''/e;
    $t->write_file_expand('sluice.conf', $c);
}

# `sluice -p TESTDIR/ -c TESTDIR/CONF ARGS`: (exit code, output)
my $ncmd = 0;
sub sluice_cmd {
    my ($conf, @args) = @_;
    my $out = "$dir/cmd-" . ++$ncmd . '.out';
    my $pid = spawn(cmd => [ $t->binary, '-p', "$dir/", '-c', "$dir/$conf",
                             @args ], log => $out, same_session => 1);
    my $rc = -1;
    if (wait_exit($pid, 30)) {
        my $st = Sluice::Sandbox::exit_status($pid);
        $rc = $st & 127 ? 128 + ($st & 127) : $st >> 8;
    } else {
        kill 'KILL', $pid;
    }
    return ($rc, slurp($out) // '');
}

# error.log from byte $off on
sub log_since { substr($t->error_log, $_[0]) }

sub query_ok {
    my (%conn) = @_;
    my $dbh = $t->dbh(%conn) or return 0;
    my $v = $dbh->selectrow_array('SELECT @@server_id');
    $dbh->disconnect;
    return ($v // 0) == 1;
}

# the files a process has open, as paths
sub open_files {
    my ($pid) = @_;
    opendir(my $d, "/proc/$pid/fd") or return ();
    return grep { defined } map { readlink "/proc/$pid/fd/$_" } readdir $d;
}

# every sluice process writes to error.log, none to the renamed file
sub logs_reopened {
    my ($old) = @_;
    for my $pid ($t->master_pid, $t->worker_pids) {
        my @f = open_files($pid);
        return 0 if grep { $_ eq "$dir/$old" } @f;
        return 0 unless grep { $_ eq "$dir/error.log" } @f;
    }
    return 1;
}

# the number of the line of sluice.conf that ends in "#<"
sub marked_line {
    my @l = split /\n/, $t->read_file('sluice.conf');
    my ($line) = map { $_ + 1 } grep { $l[$_] =~ /#<$/ } 0 .. $#l;
    return $line;
}

# the [error] line of a failed reload, naming sluice.conf:LINE
sub reload_error {
    my ($master, $line, $msg) = @_;
    my $text = 'reload failed, keeping the running configuration: '
             . "$dir/sluice.conf:$line: $msg";
    return qr/\[error\] $master: \Q$text\E/;
}

sub tcp_refused {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port(0), Timeout => 2);
    return 0 if $s;
    return $! == ECONNREFUSED;
}

my $p = $t->primary_dbh;
$p->do("DROP TABLE IF EXISTS $table");
$p->do("CREATE TABLE $table (id INT PRIMARY KEY, v VARCHAR(16))");

write_conf();
$t->run;
$t->plan(85);

# --- (a) a worker killed with SIGKILL is replaced -------------------------

{
    my @before = $t->worker_pids;
    my $off = length $t->error_log;
    my $killed = $t->kill_worker(signal => 'KILL');
    my @after = $t->worker_pids;
    my $master = $t->master_pid;
    like(log_since($off),
         qr/\[error\] $master: worker process $killed exited on signal 9$/m,
         'SIGKILL: the master logs the killed worker at [error]');
    is(scalar @after, 2, 'SIGKILL: two workers run again');
    ok(!grep({ $_ == $killed } @after), 'SIGKILL: the killed pid is gone');
    my %old = map { $_ => 1 } @before;
    is(scalar(grep { !$old{$_} } @after), 1, 'SIGKILL: one new worker');
    # several sessions, so the new worker's TCP socket gets some
    ok(!grep({ !query_ok() } 1 .. 6), 'SIGKILL: queries work afterwards');
}

# --- (b) USR1 and -s reopen reopen the logs -------------------------------

{
    rename "$dir/error.log", "$dir/error.log.1" or die "rename: $!";
    $t->signal('USR1');
    ok(wait_for(sub { logs_reopened('error.log.1') },
                what => 'every process to reopen error.log'),
       'USR1: master and workers write to a new error.log');
    like(slurp("$dir/error.log.1"),
         qr/\[notice\] \d+: signal USR1 received, reopening logs/,
         'USR1: the renamed file got the notice');
    ok(query_ok(), 'USR1: a query after reopening');
    ok(wait_for(sub { $t->grep_log(qr/accepted on/) }),
       'USR1: the new error.log gets new lines');

    rename "$dir/error.log", "$dir/error.log.2" or die "rename: $!";
    my ($rc, $out) = sluice_cmd('sluice.conf', '-s', 'reopen');
    is($rc, 0, '-s reopen exits 0');
    is($out, '', '-s reopen prints nothing');
    ok(wait_for(sub { logs_reopened('error.log.2') },
                what => 'every process to reopen error.log'),
       '-s reopen: master and workers write to a new error.log');
    ok(query_ok(), '-s reopen: a query after reopening');
    ok(wait_for(sub { $t->grep_log(qr/accepted on/) }),
       '-s reopen: the new error.log gets new lines');
    # the final check reads error.log only
    my @bad = grep { /\[(?:alert|crit)\]|Sanitizer|runtime error:/ }
        map { split /\n/, slurp("$dir/$_") // '' } qw(error.log.1 error.log.2);
    is_deeply(\@bad, [], 'the renamed logs have no alert, crit or sanitizer '
              . 'report');
}

# --- (d) a broken config on HUP keeps the running one --------------------

{
    my @before = $t->worker_pids;
    my $master = $t->master_pid;

    # a syntax error
    write_conf(extra => 'readconn_role replcia; #<');
    my $line = marked_line();
    my $off = length $t->error_log;
    $t->signal('HUP');
    my $re = reload_error($master, $line, 'invalid value "replcia" in '
                          . '"readconn_role" directive');
    ok(wait_for(sub { log_since($off) =~ $re }, what => 'the reload error'),
       'broken config on HUP: [error] with file:line');
    is_deeply([ $t->worker_pids ], \@before,
              'broken config on HUP: the workers did not change');
    ok(query_ok(), 'broken config on HUP: the old config serves on TCP');
    ok(query_ok(socket => $sock),
       'broken config on HUP: the old config serves on the unix socket');

    # valid syntax, but a listen address that cannot be bound: the reload
    # fails after the new sockets were opened, and must undo them
    my $busy = $t->primary_port;
    write_conf(extra => "listen 127.0.0.1:$busy; #<");
    $line = marked_line();
    $off = length $t->error_log;
    $t->signal('HUP');
    $re = reload_error($master, $line,
                       "bind() or listen() to 127.0.0.1:$busy failed");
    ok(wait_for(sub { log_since($off) =~ $re }, what => 'the reload error'),
       'unbindable listen on HUP: [error] with file:line');
    is_deeply([ $t->worker_pids ], \@before,
              'unbindable listen on HUP: the workers did not change');
    ok(query_ok(), 'unbindable listen on HUP: the old config serves on TCP');
    ok(query_ok(socket => $sock),
       'unbindable listen on HUP: the old config serves on the unix socket');

    # and once the config is fixed, a reload works again
    write_conf();
    ok($t->reload, 'fixed config: HUP starts new workers');
    ok(query_ok(), 'fixed config: queries work');
}

# --- (c) -s reload and -s quit go through the pid file -------------------

{
    my %old = map { $_ => 1 } $t->worker_pids;
    my ($rc, $out) = sluice_cmd('sluice.conf', '-s', 'reload');
    is($rc, 0, '-s reload exits 0');
    is($out, '', '-s reload prints nothing');
    ok(wait_for(sub {
        my @w = $t->worker_pids;
        @w == 2 && !grep { $old{$_} } @w;
    }, what => 'two new workers and the old ones gone'),
       '-s reload: new workers replace the old ones');
    ok(query_ok(), '-s reload: queries work');

    my $master = $t->master_pid;
    my @workers = $t->worker_pids;
    ($rc, $out) = sluice_cmd('sluice.conf', '-s', 'quit');
    is($rc, 0, '-s quit exits 0');
    ok(wait_for(sub { !$t->master_pid }, what => 'the master to exit'),
       '-s quit: the master exits');
    ok(!grep({ pid_alive($_) } @workers), '-s quit: so do the workers');
    ok(!-e "$dir/sluice.pid", '-s quit: the pid file is removed');
    $t->stop;
    is($t->exit_status, 0, '-s quit: the master exited with 0');
    ($rc, $out) = sluice_cmd('sluice.conf', '-s', 'reload');
    is($rc, 1, '-s reload without a running sluice fails');
    like($out, qr/^sluice: cannot read pid from "\Q$dir\/sluice.pid\E"/,
         'and says why');
}

# --- (e) QUIT lets an open transaction finish ----------------------------

{
    $t->run;
    my $dbh = $t->dbh;
    ok($dbh && $dbh->do('BEGIN')
       && $dbh->do("INSERT INTO $table VALUES (1, 'before quit')"),
       'QUIT: a transaction is open');
    my $master = $t->master_pid;
    my $off = length $t->error_log;
    $t->signal('QUIT');
    ok(wait_for(sub {
        log_since($off) =~ /gracefully shutting down, 1 session\(s\) open/
        && log_since($off) =~ /worker_shutdown_timeout passed, closing 1 /
    }, what => 'the worker to shut down and its timeout to pass'),
       'QUIT: the worker shuts down and worker_shutdown_timeout passes');
    ok(wait_for(\&tcp_refused, timeout => 5, what => 'TCP refused'),
       'QUIT: a new TCP connection is refused');
    ok(wait_for(sub { !IO::Socket::UNIX->new(Peer => $sock) }, timeout => 5,
                what => 'the unix socket to go'),
       'QUIT: a new unix socket connection fails');
    ok(!$t->dbh, 'QUIT: a new client cannot log in');
    ok($t->master_pid, 'QUIT: the master waits');

    ok($dbh->do("INSERT INTO $table VALUES (2, 'after quit')"),
       'QUIT: the open transaction goes on') or diag($dbh->errstr);
    ok($dbh->do('COMMIT'), 'QUIT: and commits') or diag($dbh->errstr);
    is($p->selectrow_array("SELECT COUNT(*) FROM $table"), 2,
       'QUIT: both rows are on the primary');
    ok(wait_for(sub {
        log_since($off) =~ /closed idle session on shutdown/ }),
       'QUIT: sluice closes the session after COMMIT');
    ok(!$dbh->do('SELECT 1'), 'QUIT: the client sees it closed');
    ok(wait_for(sub { !$t->master_pid }, what => 'the master to exit'),
       'QUIT: then the master exits');
    $t->stop;
    is($t->exit_status, 0, 'QUIT: with status 0');
}

# --- (f) TERM stops everything at once -----------------------------------

{
    # with a long shutdown timeout, a QUIT would wait for the transaction
    write_conf(timeout => '1m');
    $t->run;
    my $dbh = $t->dbh;
    my $idle = $t->dbh;
    ok($dbh && $idle && $dbh->do('BEGIN')
       && $dbh->do("INSERT INTO $table VALUES (3, 'before term')"),
       'TERM: a transaction and an idle session are open');
    my @pids = ($t->master_pid, $t->worker_pids);
    my $t0 = time;
    $t->signal('TERM');
    ok(wait_for(sub { !grep { pid_alive($_) } @pids }, timeout => 5,
                what => 'every sluice process to exit'),
       'TERM: master and workers exit');
    cmp_ok(time - $t0, '<', 3, 'TERM: within 3 s');
    ok(!$dbh->do('SELECT 1') && !$idle->do('SELECT 1'),
       'TERM: the sessions are closed');
    ok(wait_for(sub {
        !$p->selectrow_array("SELECT COUNT(*) FROM $table WHERE id = 3")
    }), 'TERM: the cut transaction is rolled back');
    $t->stop;
    is($t->exit_status, 0, 'TERM: the master exited with 0');
}

# --- (g) daemon on -------------------------------------------------------

my $daemon;     # the detached master, stopped in END if the test fails

{
    $t->write_file_expand('daemon.conf', <<'EOF');
daemon on;
pid %%TESTDIR%%/daemon.pid;
error_log %%TESTDIR%%/error.log debug;
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
    }
}
EOF
    # stderr.log: the final check looks there for sanitizer reports
    my $launcher = spawn(cmd => [ $t->binary, '-p', "$dir/", '-c',
                                  "$dir/daemon.conf" ],
                         log => "$dir/stderr.log");
    ok(wait_exit($launcher, 10), 'daemon: the launching command returns');
    is(Sluice::Sandbox::exit_status($launcher), 0, 'daemon: with status 0');
    like(slurp("$dir/daemon.pid") // '', qr/^\d+\n\z/,
         'daemon: the pid file is there as it returns (Type=forking)');
    $daemon = wait_for(sub {
        my $pid = (slurp("$dir/daemon.pid") // '') =~ /^(\d+)\n\z/ ? $1 : 0;
        $pid && pid_alive($pid) ? $pid : 0;
    }, what => 'the pid file');
    ok($daemon, 'daemon: the pid file names a running master');
    isnt($daemon, $launcher, 'daemon: not the launching process');
    my $stat = slurp("/proc/$daemon/stat") // '';
    $stat =~ s/^.*\)\s+//s;
    my (undef, $ppid, undef, $sid) = split ' ', $stat;
    ok($sid == $daemon && $ppid != $$,
       'daemon: the master leads its own session, detached from us');
    like(proc_cmdline($daemon) // '', qr/^sluice: master process/,
         'daemon: titled master process');
    ok(wait_for(sub { query_ok(port => $t->port(1)) }, what => 'a query'),
       'daemon: queries work');

    my ($rc, $out) = sluice_cmd('daemon.conf', '-s', 'stop');
    is($rc, 0, '-s stop exits 0');
    ok(wait_for(sub { !pid_alive($daemon) }, what => 'the daemon to exit'),
       '-s stop: the daemon exits');
    ok(!-e "$dir/daemon.pid", '-s stop: the pid file is removed');
    ok(wait_for(sub { !IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                             PeerPort => $t->port(1)) }),
       '-s stop: nothing listens any more');
}

{
    # a master that cannot write its pid file: the launcher says so
    (my $c = $t->read_file('daemon.conf')) =~ s{daemon\.pid}{no/such/dir.pid};
    $t->write_file('nopid.conf', $c);
    my $launcher = spawn(cmd => [ $t->binary, '-p', "$dir/", '-c',
                                  "$dir/nopid.conf" ],
                         log => "$dir/stderr.log");
    ok(wait_exit($launcher, 10)
       && (Sluice::Sandbox::exit_status($launcher) // 0) >> 8 == 1,
       'daemon: the launching command exits 1 when the master fails '
       . 'before its pid file');
    $t->allow_log(qr/no\/such\/dir\.pid/);
}

# --- (h) master_process off ----------------------------------------------

{
    # worker_processes is ignored: there is no master to fork workers
    $t->write_file_expand('sluice.conf', <<'EOF');
master_process off;
worker_processes 2;
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
    $t->run;
    my $pid = $t->master_pid;
    is(wait_for(sub { (slurp("$dir/sluice.pid") // '') =~ /^(\d+)\n\z/ && $1 },
                what => 'the pid file'), $pid,
       'master_process off: the pid file names the process started');
    my $off = length $t->error_log;
    ok(query_ok(), 'master_process off: a query works');
    ok(wait_for(sub { log_since($off) =~ /\[info\] (\d+): \*\d+ authenticated/
                      && $1 == $pid }, what => 'the authenticated line'),
       'master_process off: that process served the session');
    opendir(my $d, '/proc') or die "/proc: $!";
    my @children = grep {
        my $st = /^\d+\z/ ? slurp("/proc/$_/stat") // '' : '';
        $st =~ s/^.*\)\s+//s;
        (( split " ", $st )[1] // 0) == $pid;
    } readdir $d;
    is_deeply(\@children, [], 'master_process off: it has no child process');

    my ($rc, $out) = sluice_cmd('sluice.conf', '-s', 'stop');
    is($rc, 0, 'master_process off: -s stop exits 0');
    ok(wait_for(sub { !pid_alive($pid) }, what => 'sluice to exit'),
       'master_process off: -s stop stops it');
    ok(!-e "$dir/sluice.pid", 'master_process off: the pid file is removed');
    ok(tcp_refused(), 'master_process off: nothing listens any more');
    $t->stop;
    is($t->exit_status, 0, 'master_process off: it exited with 0');
}

# --- (i) a reload carries the shared counters over ----------------------

{
    # a long shutdown timeout: the old worker keeps its session open
    $t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
worker_shutdown_timeout 1m;
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary max_connections=2; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
}
EOF
    $t->run;
    my $before = $t->dbh;
    ok($before && $before->do('SELECT 1'),
       'carry over: a session is open before the reload');
    my $master = $t->master_pid;
    my $off = length $t->error_log;
    ok($t->reload, 'carry over: a reload with the same config');
    my $re = qr/\[info\] $master: shared memory zone "mysql_stats" /
           . qr/\(\d+ bytes\) carried over$/m;
    ok(wait_for(sub { log_since($off) =~ $re },
                what => 'the carried over line'),
       'carry over: the master logs that zone "mysql_stats" was carried over');
    is($before && $before->selectrow_array('SELECT 7'), 7,
       'carry over: the old session still works');
    my $second = $t->dbh;
    ok($second && $second->do('SELECT 1'),
       'carry over: one more session opens (max_connections=2)');
    ok(!$t->dbh, 'carry over: a third is refused: the count of the old '
       . 'worker\'s session was carried over');
    is($DBI::err, 1040, 'carry over: with ERR 1040');
    $before->disconnect if $before;
    ok(wait_for(sub { my $d = $t->dbh; $d && $d->do('SELECT 1') },
                what => 'a session once the old one closed'),
       'carry over: once the old worker\'s session closes, its slot is free');
}

$p->do("DROP TABLE $table");

END {
    # only the daemon this test started, and only if it is still that
    if ($daemon && pid_alive($daemon)
        && (proc_cmdline($daemon) // '') =~ /^sluice: master process/)
    {
        kill 'TERM', $daemon;
    }
}
