#!/usr/bin/perl

# The sluice benchmark.  Run it through contrib/bench/run (or `make
# bench`), which installs the packages and raises the open files limit
# first; `contrib/bench/run --help` says how.  See contrib/bench/README.
#
# One run: build a release sluice from the working tree, start the
# sandbox primary and replica, prepare the sysbench tables once, measure
# the memory of idle sessions on each proxy, then the throughput of every
# target with the targets alternating inside each point (A B C A B C ...)
# so that drift of the machine falls on all of them alike, and write
# docs/benchmarks.md, docs/bench-qps.png, docs/bench-cpu.png and a
# `BENCH {json}` line on stdout.  Everything it starts is stopped however
# it ends.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../../t/lib";

use Cwd qw(abs_path);
use DBI;
use File::Path qw(make_path remove_tree);
use File::Spec;
use File::Temp qw(tempdir);
use Getopt::Long qw(GetOptionsFromArray);
use IO::Socket::INET;
use List::Util qw(min max sum);
use POSIX ();
use Time::HiRes qw(time sleep);

use Sluice::Sandbox qw(pid_alive wait_exit proc_starttime proc_cmdline
                       slurp poll_until find_bin);
use SluiceBench::Build qw(build_sluice check_release build_idleconn
                          build_nullserver);
use SluiceBench::Proc qw(clk_tck cpu_ticks rss_bytes nofile_limit
                         machine_ticks nproc cpu_model mem_total);
use SluiceBench::Report qw(aggregate write_markdown write_plots
                           print_summary);
use SluiceBench::Sysbench qw(sysbench_cmd sysbench_parse sysbench_prepare
                             sysbench_bin);
use SluiceBench::Target;
use SluiceBench::Util qw(note fail_msg run_capture on_cleanup
                         cancel_cleanup cleanup_all guard unguard
                         shell_quote catch_signals interrupted);

my $TOP = abs_path("$FindBin::RealBin/../..");

# Workload short names: the sysbench script of each, and its options.
my %SCRIPT = (point_select => 'oltp_point_select',
              read_only    => 'oltp_read_only',
              read_write   => 'oltp_read_write',
              web          => "$FindBin::RealBin/causal_web.lua");
my %SCRIPT_ARGS = (
    # autocommit statements: readwritesplit sends every statement of a
    # transaction to the primary, where causal_reads has nothing to do.
    # Without a transaction a DELETE and the INSERT of the same id by
    # two threads may meet: a duplicate key is ignored as a deadlock is
    read_write => [ '--skip_trx=on',
                    '--mysql-ignore-errors=1062,1213,1205,1020' ],
);

my %DEFAULTS = (
    targets    => join(',', SluiceBench::Target->default_names),
    transports => 'tcp,unix',
    workloads  => 'point_select,read_only',
    ps_modes   => 'disable,auto',
    threads    => '1,8,32,128',
    rounds     => 3,
    time       => 2,
    idle_conns => 10000,
    tables     => 8,
    table_size => 10000,
    output     => "$TOP/docs",
    build_dir  => "$TOP/objs/bench-build",
    configure  => '',
);
# --quick: a few seconds per point for a developer optimising; the floor
# points are all still measured
my %QUICK = (threads => '1,8,32', rounds => 2, time => 1,
             transports => 'tcp',
             targets => join(',', SluiceBench::Target->main_names));
# --cache: the query cache's workload (issue 10): point selects over 4
# tables of 1000 rows, which all fit and hit, against direct and readconn
# without the cache; its own report
my %CACHE = (targets => join(',', 'direct', 'sluice-1', 'sluice-auto',
                             SluiceBench::Target->preset_names('cache')),
             workloads => 'point_select', ps_modes => 'disable',
             threads => '8,32', transports => 'tcp', tables => 4,
             table_size => 1000, idle_conns => 0,
             output => "$TOP/docs/bench-cache");
# --redis: the Redis tier (issue 22): the cache's workload, served from
# the zone without and with cache_redis, from Redis, with Redis dead; the
# sandbox's redis-server; its own report
my %REDIS = (targets => join(',', 'direct', 'cache-1', 'null-1',
                             SluiceBench::Target->preset_names('redis')),
             workloads => 'point_select', ps_modes => 'disable',
             threads => '32', transports => 'tcp', tables => 4,
             table_size => 1000, idle_conns => 0,
             output => "$TOP/docs/bench-redis");
# --causal: what causal_reads costs (issue 19): oltp_read_write in
# autocommit and a web application's mix (causal_web.lua) through
# readwritesplit with each causal_reads setting; the servers count where
# the reads went, the web mix how many reads missed the write before them
my %CAUSAL = (targets => join(',',
                  SluiceBench::Target->preset_names('causal')),
              workloads => 'read_write,web', ps_modes => 'disable',
              threads => '8,32', transports => 'tcp', rounds => 5,
              time => 10, idle_conns => 0,
              output => "$TOP/docs/bench-causal");

my $USAGE = <<'EOF';
usage: contrib/bench/run [options]        (or: make bench BENCH_ARGS='...')

  --quick               1 s per point, 2 rounds, threads 1,8,32, TCP only,
                        no -other/-batch variants
  --cache               the query cache: point selects over 4 tables of
                        1000 rows, 8 and 32 threads, TCP, direct and
                        readconn with and without the cache, report in
                        docs/bench-cache/
  --redis               the Redis tier: the --cache workload at 32
                        threads through readconn + cache without and
                        with cache_redis (zone hits), strict (Redis
                        hits), a 1 MB zone, Redis dead; nullserver and
                        direct beside; report in docs/bench-redis/
  --causal              what causal_reads costs: oltp_read_write
                        (autocommit) and a web mix (causal_web.lua)
                        through readwritesplit with 2 workers, for each
                        causal_reads setting, 8 and 32 threads, 5 rounds
                        of 10 s; the reads that reached the replica and
                        the stale ones; report in docs/bench-causal/
  --targets LIST        comma-separated, from: %TARGETS%
  --transports LIST     tcp,unix
  --workloads LIST      point_select,read_only (--causal: read_write,web)
  --ps-modes LIST       sysbench --db-ps-mode values: disable,auto
  --threads LIST        client threads, e.g. 1,8,32,128
  --rounds N            runs of every point (the median is reported)
  --time S              seconds per run
  --idle-conns N        idle sessions for the memory test (0: skip it)
  --tables N, --table-size N      sysbench tables (8 x 10000 rows)
  --keep-sandbox        leave the sandbox running (in $TMPDIR/
                        sluice-bench-sandbox) and reuse it next time
  --sandbox DIR         the same, in DIR
  --sluice PATH         measure this sluice binary (a release build)
                        instead of building one from the working tree
  --build-dir DIR       where the release build goes (objs/bench-build)
  --configure 'ARGS'    extra ./configure arguments for that build
  --output DIR          where benchmarks.md and the PNGs go (docs/)
  --keep-workdir        keep configs, logs and sysbench outputs
  --idle-states         let idle CPUs halt (by default the bench holds
                        /dev/cpu_dma_latency at 0 while it runs)
  --no-deps             do not check the Debian packages (run only)
  --scrape HZ           sluice targets get a status_listen, and a client
                        GETs its /metrics HZ times a second while they
                        run (the status process's CPU is in the proxy's)
  --help

Defaults:%DEFAULTS%
EOF

my (%opt, $CTX);

sub parse_args {
    my @argv = @_;
    my %given;
    GetOptionsFromArray(\@argv, \%given, 'quick', 'cache', 'causal', 'redis',
        'targets=s',
        'transports=s', 'workloads=s', 'ps-modes=s', 'threads=s',
        'rounds=i', 'time=i', 'idle-conns=i', 'tables=i', 'table-size=i',
        'keep-sandbox', 'sandbox=s', 'sluice=s', 'build-dir=s',
        'configure=s', 'output=s', 'keep-workdir', 'no-deps',
        'idle-states', 'scrape=i', 'help')
        or usage(2);
    usage(0) if $given{help};
    usage(2) if @argv;
    my %g = map { (my $k = $_) =~ tr/-/_/; ($k => $given{$_}) } keys %given;
    die "--cache, --causal, --redis: one preset at a time\n"
        if ($g{cache} // 0) + ($g{causal} // 0) + ($g{redis} // 0) > 1;
    %opt = (%DEFAULTS, ($g{cache} ? %CACHE : ()),
            ($g{causal} ? %CAUSAL : ()), ($g{redis} ? %REDIS : ()),
            ($g{quick} ? %QUICK : ()), %g);
    # --quick's targets are not a preset's, nor its workloads
    if ($g{quick} && ($g{cache} || $g{causal} || $g{redis})) {
        my $pre = $g{cache} ? \%CACHE : $g{redis} ? \%REDIS : \%CAUSAL;
        $opt{$_} = $g{$_} // $pre->{$_} for qw(targets workloads);
    }
    for my $k (qw(targets transports workloads ps_modes threads)) {
        $opt{$k} = [ grep { length } split /\s*,\s*/, $opt{$k} ];
        (my $o = $k) =~ tr/_/-/;
        die "--$o: empty list\n" unless @{ $opt{$k} };
    }
    my %known = map { $_ => 1 } SluiceBench::Target->names;
    _check_list('targets', \%known);
    _check_list('transports', { tcp => 1, unix => 1 });
    _check_list('workloads', \%SCRIPT);
    _check_list('ps_modes', { disable => 1, auto => 1 });
    die "--threads: positive integers\n"
        if grep { !/^\d+\z/ || $_ < 1 } @{ $opt{threads} };
    die "--rounds and --time must be at least 1\n"
        if $opt{rounds} < 1 || $opt{time} < 1;
    $opt{sandbox} //= ($ENV{TMPDIR} || '/tmp') . '/sluice-bench-sandbox'
        if $opt{keep_sandbox};
    $opt{sandbox} = File::Spec->rel2abs($opt{sandbox}) if $opt{sandbox};
    $opt{output} = File::Spec->rel2abs($opt{output});
}

sub _check_list {
    my ($k, $known) = @_;
    (my $o = $k) =~ tr/_/-/;
    for (@{ $opt{$k} }) {
        die "--$o: unknown \"$_\" (known: "
            . join(', ', sort keys %$known) . ")\n" unless $known->{$_};
    }
}

sub usage {
    my ($rc) = @_;
    my $u = $USAGE;
    $u =~ s/%TARGETS%/join ',', SluiceBench::Target->names/e;
    my $d = join '; ', map { "$_ $DEFAULTS{$_}" }
        qw(rounds time threads transports);
    my $q = join '; ', map { "$_ $QUICK{$_}" }
        qw(rounds time threads transports);
    $u =~ s/%DEFAULTS%/\n    full: $d\n    quick: $q/;
    ($rc ? *STDERR : *STDOUT)->print($u);
    exit $rc;
}


# --- context ---------------------------------------------------------------

sub make_context {
    my ($soft, $hard) = nofile_limit();
    my $work = tempdir('sluice-bench.XXXXXX', TMPDIR => 1);
    $work = abs_path($work);
    guard("tree $work") unless $opt{keep_workdir};
    on_cleanup('work directory', sub {
        if ($opt{keep_workdir}) { note('kept %s', $work) }
        else                    { remove_tree($work) }
        unguard("tree $work");
    });
    return {
        top => $TOP, workdir => $work, nproc => nproc(), nofile => $soft,
        nofile_hard => $hard, user => 'app', password => 'secret',
        db => 'test', versions => {}, notes => [],
        started => time, phases => {}, scrape => $opt{scrape} // 0,
    };
}

sub ctx_note {
    my ($msg) = @_;
    push @{ $CTX->{notes} }, $msg;
    note('note: %s', $msg);
}


# --- CPU idle states ------------------------------------------------------

# A CPU that halts when idle takes tens of µs to wake (far more in a VM,
# where a halt is an exit to the hypervisor), and at one client thread the
# query ping-pongs between processes that each sleep in between: the
# numbers then measure wake-ups, and swing 4x with whatever else keeps the
# CPUs awake.  Holding /dev/cpu_dma_latency open at 0 keeps idle CPUs
# polling instead (what tuned's latency-performance profile does) for as
# long as the bench holds the file; the kernel drops the request when it
# is closed, also if the bench is killed.  Needs root; --idle-states off.
sub hold_cpu_latency {
    my $dev = '/dev/cpu_dma_latency';
    if ($opt{idle_states}) {
        $CTX->{versions}{idle} = 'allowed (--idle-states)';
        return;
    }
    my $fh;
    if (!open($fh, '>', $dev) || !syswrite($fh, pack('l', 0))) {
        ctx_note("cannot hold $dev at 0 ($!): results at few client "
            . 'threads include CPU wake-ups from idle states');
        $CTX->{versions}{idle} = 'allowed (no access to ' . $dev . ')';
        return;
    }
    $CTX->{dma_latency} = $fh;
    $CTX->{versions}{idle} = "polling: $dev held at 0 during the run";
    on_cleanup('cpu latency', sub { close $fh });
}


# --- sluice and the client ------------------------------------------------

sub prepare_binaries {
    my $t0 = time;
    my $desc;
    if ($opt{sluice}) {
        $CTX->{sluice_bin} = abs_path($opt{sluice})
            // die "$opt{sluice}: not found\n";
        $desc = check_release($CTX->{sluice_bin});
    } else {
        die "--configure: the bench measures release builds only\n"
            if $opt{configure} =~ /--with-(?:sanitizers|debug)/;
        $CTX->{sluice_bin} = build_sluice(top => $TOP,
            dir => $opt{build_dir}, nproc => $CTX->{nproc},
            configure => [ split ' ', $opt{configure} ]);
        $desc = check_release($CTX->{sluice_bin});
    }
    $CTX->{sluice_modules} = $desc->{modules};
    $CTX->{versions}{sluice} = "$desc->{version} ("
        . ($opt{sluice} ? $CTX->{sluice_bin} : git_describe())
        . ', configure: ' . ($desc->{configure} eq '' ? '(defaults)'
                             : $desc->{configure}) . ')';
    $CTX->{sluice_rlimit_ok} = sluice_knows_rlimit();
    $CTX->{idleconn} = build_idleconn(top => $TOP, dir => $opt{build_dir})
        if $opt{idle_conns} > 0;
    $CTX->{nullserver} = build_nullserver(top => $TOP,
        dir => $opt{build_dir}) if grep { /^null-/ } @{ $opt{targets} };
    $CTX->{phases}{build} = time - $t0;
}

# The git commit of the working tree, "+ changes" if it differs from it.
sub git_describe {
    my ($rc, $out) = run_capture(cmd => [ 'git', '-C', $TOP, 'rev-parse',
                                          '--short', 'HEAD' ]);
    return 'not a git tree' if $rc;
    chomp(my $rev = $out);
    ($rc, $out) = run_capture(cmd => [ 'git', '-C', $TOP, 'status',
        '--porcelain', '--untracked-files=no' ]);
    return "git $rev" . ($rc == 0 && $out =~ /\S/
        ? ' + uncommitted changes' : '');
}

# worker_rlimit_nofile is new: an older sluice rejects it, and then the
# workers keep the limit they inherit from us.
sub sluice_knows_rlimit {
    my $d = "$CTX->{workdir}/rlimit-probe";
    make_path($d);
    open(my $fh, '>', "$d/sluice.conf") or die "$d/sluice.conf: $!\n";
    print $fh "worker_rlimit_nofile 1024;\nerror_log $d/error.log;\n"
        . "pid $d/sluice.pid;\n";
    close $fh;
    my ($rc, $out) = run_capture(cmd => [ $CTX->{sluice_bin}, '-t', '-p',
                                          "$d/", '-c', "$d/sluice.conf" ]);
    return 1 if $rc == 0;
    ctx_note('this sluice does not know worker_rlimit_nofile: its '
        . "workers inherit the bench's limit ($CTX->{nofile})")
        if $out =~ /worker_rlimit_nofile/;
    return 0;
}


# --- sandbox ---------------------------------------------------------------

# mariadbd options on top of the test sandbox's: room for the idle
# sessions (readconn opens one backend connection per client session;
# never fewer than the default asks, so that a kept sandbox serves the
# next run), a thread pool so that 10 000 connections do not mean 10 000
# threads.
sub mariadbd_args {
    my $maxconn = max($DEFAULTS{idle_conns}, $opt{idle_conns}) + 500;
    return ("--max-connections=$maxconn",
            "--open-files-limit=$CTX->{nofile}",
            '--thread-handling=pool-of-threads',
            '--max-connect-errors=1000000',
            '--max-prepared-stmt-count=1048576');
}

sub start_sandbox {
    my $t0 = time;
    my $dir = $opt{sandbox} // "$CTX->{workdir}/sandbox";
    my $sb = Sluice::Sandbox->new(dir => $dir,
                                  mariadbd_args => [ mariadbd_args() ]);
    $sb->load;
    if ($opt{sandbox} && $sb->running && $sb->has_mariadb) {
        note('using the running sandbox in %s', $dir);
    } else {
        $sb->stop if -e "$dir/.sluice-sandbox";
        if (!$opt{sandbox}) {
            guard("sandbox $dir");
            on_cleanup('sandbox', sub { $sb->stop; unguard("sandbox $dir") });
        }
        note('starting the sandbox primary and replica in %s', $dir);
        $sb->start;
    }
    if (grep { /^(?:zone-redis|redis-)/ } @{ $opt{targets} }) {
        $sb->start_redis;
        $CTX->{redis} = { port => $sb->port('redis') };
    }
    start_redis_cluster() if grep { /^redis-cluster/ } @{ $opt{targets} };
    $CTX->{sandbox} = $sb;
    $CTX->{primary} = { port => $sb->port('primary'),
                        socket => $sb->socket('primary') };
    $CTX->{replica} = { port => $sb->port('replica') };
    $CTX->{server_pids} = [ grep { defined }
                            map { server_pid($sb, $_) } qw(primary replica) ];
    check_server_settings();
    $CTX->{phases}{sandbox} = time - $t0;
}

# A three-master Redis Cluster for the redis-cluster targets
# (contrib/bench/redis-cluster), stopped at the end.
sub start_redis_cluster {
    my $dir = "$CTX->{workdir}/redis-cluster";
    my $port;
    for (1 .. 50) {     # three ports and their buses (+100) free
        $port = 20000 + int(rand(30000));
        last unless grep { !port_free($_) }
            map { ($port + $_, $port + 100 + $_) } 0 .. 2;
    }
    my $out = qx{$TOP/contrib/bench/redis-cluster start $dir $port 2>&1};
    die "the Redis Cluster did not start:\n$out" if $?;
    on_cleanup('redis cluster',
               sub { system("$TOP/contrib/bench/redis-cluster", 'stop',
                            $dir) });
    note('a Redis Cluster of three masters on ports %d-%d', $port,
         $port + 2);
    $CTX->{redis_cluster} = { port => $port };
}

# Whether nothing listens on 127.0.0.1:$port.
sub port_free {
    my ($port) = @_;
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                  LocalPort => $port, ReuseAddr => 1)
        or return 0;
    close $s;
    return 1;
}

# The pid of the sandbox's mariadbd of $role, from its pid file, checked
# against its command line (a pid may have been reused).
sub server_pid {
    my ($sb, $role) = @_;
    my $d = $sb->dir . "/$role";
    my ($pid) = (slurp("$d/mysqld.pid") // '') =~ /(\d+)/ or return undef;
    my $cmd = proc_cmdline($pid) // '';
    return $cmd =~ /(?:mariadbd|mysqld)\b/ && index($cmd, "$d/data") >= 0
        ? [ $pid, proc_starttime($pid) ] : undef;
}

sub admin_dbh {
    my $d = $CTX->{admin};
    return $d if $d && $d->ping;
    return $CTX->{admin} = $CTX->{sandbox}->admin_dbh('primary');
}

# The primary's connections but the proxies' monitors' and binlog
# readers' (a cache target's stay connected the whole run).
sub client_conns {
    my ($n) = admin_dbh()->selectrow_array('SELECT COUNT(*) FROM '
        . "information_schema.PROCESSLIST WHERE USER NOT IN ('monitor', "
        . "'repl')");
    return $n;
}

sub status_var {
    my ($name) = @_;
    my (undef, $v) = admin_dbh()->selectrow_array(
        'SHOW GLOBAL STATUS LIKE ?', undef, $name);
    return $v;
}

sub check_server_settings {
    my ($maxconn, $th, $ver) = admin_dbh()->selectrow_array(
        'SELECT @@max_connections, @@thread_handling, @@version');
    $CTX->{versions}{mariadb} = "$ver (thread_handling=$th, "
        . "max_connections=$maxconn)";
    $CTX->{server_maxconn} = $maxconn;
    if ($opt{idle_conns} > 0 && $maxconn < $opt{idle_conns} + 100) {
        die "the sandbox's max_connections is $maxconn, the idle test needs "
            . ($opt{idle_conns} + 100) . ": stop that sandbox "
            . "(contrib/sandbox/sluice-sandbox stop DIR) or lower "
            . "--idle-conns\n" if $opt{sandbox};
        ctx_note("mariadbd accepts only $maxconn connections");
    }
}

# Wait until the primary has no more connections than at the baseline:
# the sessions of the last run are gone (proxies close their backend
# connections after the client's).  False at the deadline.
sub wait_settled {
    my ($timeout) = @_;
    my $base = $CTX->{baseline_conns};
    my $n;
    my $ok = poll_until($timeout // 30, sub {
        $n = client_conns();
        $n <= $base;
    });
    ctx_note("the primary still had $n connections (baseline $base) "
        . 'after ' . ($timeout // 30) . ' s') unless $ok;
    return $ok;
}

sub prepare_tables {
    my $t0 = time;
    my $how = sysbench_prepare(dbh => admin_dbh(), user => $CTX->{user},
        password => $CTX->{password}, db => $CTX->{db},
        tables => $opt{tables}, table_size => $opt{table_size},
        endpoint => { unix => $CTX->{primary}{socket} },
        threads => $CTX->{nproc}, log => "$CTX->{workdir}/prepare.log");
    note('sysbench tables %s: %d x %d rows', $how, $opt{tables},
         $opt{table_size});
    # readwritesplit reads from the replica: it must have them all
    my $r = $CTX->{sandbox}->admin_dbh('replica');
    my $last = "`$CTX->{db}`.`sbtest$opt{tables}`";
    poll_until(120, sub {
        (eval { $r->selectrow_array("SELECT COUNT(*) FROM $last") } // -1)
            == $opt{table_size};
    }) or die "the replica has not caught up with the sysbench tables "
        . "within 120 s\n";
    # the primary's connections when nothing of ours is connected but the
    # admin handle (the replica's IO thread counts too)
    $CTX->{baseline_conns} = client_conns();
    $CTX->{phases}{prepare} = time - $t0;
}

sub versions {
    my $v = $CTX->{versions};
    my ($rc, $out) = run_capture(cmd => [ find_bin('haproxy'), '-v' ]);
    ($v->{haproxy}) = $out =~ /version\s+(\S+)/;
    ($rc, $out) = run_capture(cmd => [ sysbench_bin(), '--version' ]);
    ($v->{sysbench}) = $out =~ /sysbench\s+(\S+)/;
    ($rc, $out) = run_capture(cmd => [ 'uname', '-sr' ]);
    chomp($v->{kernel} = $out);
}


# --- causal_reads: where the reads went ---------------------------------

# Each server counts the statements of each user (userstat,
# information_schema.USER_STATISTICS): the bench user's SELECTs on the
# primary and on the replica are the reads each of them served, the
# monitor's and the replication applier's apart.  Turned on for the run,
# and off again at its end where it was off.
sub causal_prepare {
    for my $role (qw(primary replica)) {
        my $dbh = $CTX->{sandbox}->admin_dbh($role);
        next if $dbh->selectrow_array('SELECT @@global.userstat');
        $dbh->do('SET GLOBAL userstat = 1');
        on_cleanup("userstat on the $role", sub {
            $CTX->{sandbox}->admin_dbh($role)->do('SET GLOBAL userstat = 0');
        });
    }
}

sub server_dbh {
    my ($role) = @_;
    return admin_dbh() if $role eq 'primary';
    my $d = $CTX->{replica_admin};
    return $d if $d && $d->ping;
    return $CTX->{replica_admin} = $CTX->{sandbox}->admin_dbh('replica');
}

# { select, update, other }: the statements of the bench user on $role
# since the server started.
sub user_statements {
    my ($role) = @_;
    my ($sel, $upd, $oth) = server_dbh($role)->selectrow_array(
        'SELECT SELECT_COMMANDS, UPDATE_COMMANDS, OTHER_COMMANDS FROM '
        . 'information_schema.USER_STATISTICS WHERE USER = ?', undef,
        $CTX->{user});
    return { select => $sel // 0, update => $upd // 0, other => $oth // 0 };
}

# The transactions the primary binlogged that the replica has not
# applied: over the GTID domains, the primary's seq less the replica's.
sub replica_backlog {
    my ($p) = admin_dbh()->selectrow_array('SELECT @@global.gtid_binlog_pos');
    my ($r) = server_dbh('replica')->selectrow_array(
        'SELECT @@global.gtid_slave_pos');
    my %applied = map { /^(\d+)-\d+-(\d+)\z/ ? ($1 => $2) : () }
                  split /,/, $r // '';
    my $n = 0;
    for (split /,/, $p // '') {
        my ($d, $seq) = /^(\d+)-\d+-(\d+)\z/ or next;
        $n += max(0, $seq - ($applied{$d} // 0));
    }
    return $n;
}

# Before a run: the replica has applied what the runs before wrote, so
# that no series inherits another's lag.
sub wait_replica {
    my $n;
    poll_until(300, sub { ($n = replica_backlog()) == 0 })
        or ctx_note("the replica was still $n transactions behind after "
                    . '300 s');
}

# What the servers counted around a run of a causal target, into $r:
# the reads each served (reads_primary, reads_replica, replica_share),
# the replica's other statements (the waits of causal_reads_timeout,
# session commands), and how far behind the replica was as sysbench
# ended (backlog, in transactions).
sub causal_counts {
    my ($r, $before, $after, $backlog) = @_;
    my $rp = $after->{primary}{select} - $before->{primary}{select};
    my $rr = $after->{replica}{select} - $before->{replica}{select};
    $r->{reads_primary} = $rp;
    $r->{reads_replica} = $rr;
    $r->{replica_share} = $rp + $rr ? $rr / ($rp + $rr) : undef;
    $r->{replica_other} = $after->{replica}{other}
        - $before->{replica}{other};
    $r->{backlog} = $backlog;
    # more than sysbench sent: the proxy's own (the GTID asked of a
    # client without session tracking)
    $r->{reads_extra} = $rp + $rr - ($r->{reads} // 0);
}

sub causal_snapshot {
    return { map { ($_ => user_statements($_)) } qw(primary replica) };
}


# --- targets -----------------------------------------------------------------

sub make_targets {
    my @t;
    for my $name (@{ $opt{targets} }) {
        my $t = SluiceBench::Target->create($name, $CTX);
        if (my $why = $t->unavailable) {
            ctx_note("target $name skipped: $why");
            next;
        }
        push @t, $t;
    }
    die "no target to measure\n" unless @t;
    return @t;
}

sub start_target {
    my ($t, %o) = @_;
    my $tok = on_cleanup("stopping $t->{name}", sub { $t->stop });
    $t->start(%o);
    return $tok;
}

sub stop_target {
    my ($t, $tok) = @_;
    $t->stop;
    cancel_cleanup($tok);
}


# --- idle sessions: memory --------------------------------------------------

sub idle_phase {
    my (@targets) = @_;
    my $t0 = time;
    my @res;
    for my $t (grep { $_->is_proxy && !$_->is_variant } @targets) {
        my $r = eval { idle_one($t) };
        if (!$r) {
            die $@ if interrupted();
            my $err = $@ || 'failed';
            $err =~ s/\s+\z//;
            ctx_note("idle sessions on $t->{name}: $err");
            $r = { target => $t->{name}, error => $err };
        }
        push @res, $r;
    }
    $CTX->{phases}{idle} = time - $t0;
    return \@res;
}

# As many as asked, unless a limit says fewer: the open files of the
# proxy's processes (2 per session) or of idleconn, or max_connections.
sub idle_count {
    my ($t) = @_;
    my $fds = "the open files limit ($CTX->{nofile}; raising it needs "
        . 'root with CAP_SYS_RESOURCE)';
    my %cap = ("$fds of the proxy, 2 per session" => $t->idle_capacity,
               "$fds of idleconn" => $CTX->{nofile} - 64,
               "max_connections ($CTX->{server_maxconn}) of the primary"
                   => $CTX->{server_maxconn} - 100);
    my ($why) = sort { $cap{$a} <=> $cap{$b} } keys %cap;
    return $opt{idle_conns} if $cap{$why} >= $opt{idle_conns};
    ctx_note("$t->{name}: $cap{$why} idle sessions instead of "
        . "$opt{idle_conns}, for $why");
    return $cap{$why};
}

# Start $t afresh (so that no memory freed by an earlier phase is reused),
# open N sessions through it with idleconn, and take the RSS of its
# workers before and after.
sub idle_one {
    my ($t) = @_;
    my $n = idle_count($t);
    note('idle sessions: %d through %s', $n, $t->{name});
    my $tok = start_target($t, sessions => $n);
    my $r = eval {
        my $warm = $t->dbh('tcp') or die "cannot log in through it\n";
        $warm->disconnect;
        wait_settled(30);
        my @pids = $t->rss_pids;
        my $rss0 = sum(map { rss_bytes($_) // 0 } @pids);
        my $conns0 = status_var('Threads_connected');
        my $ic = idleconn_open($t, $n);
        my $rss1 = stable_rss(@pids);
        my $backends = status_var('Threads_connected') - $conns0;
        idleconn_close($ic);
        wait_settled(120);
        { target => $t->{name}, label => $t->label, conns => $n,
          processes => scalar @pids, rss_before => $rss0,
          rss_after => $rss1, backend_conns => $backends,
          bytes_per_conn => ($rss1 - $rss0) / $n, seconds => $ic->{secs} };
    };
    my $err = $@;
    stop_target($t, $tok);
    die $err unless $r;
    return $r;
}

# RSS once two readings 200 ms apart agree (at most 3 s).
sub stable_rss {
    my (@pids) = @_;
    my $last = -1;
    my $v;
    poll_until(3, sub {
        $v = sum(map { rss_bytes($_) // 0 } @pids);
        my $same = $v == $last;
        $last = $v;
        sleep 0.2 unless $same;
        $same;
    });
    return $v;
}

sub idleconn_open {
    my ($t, $n) = @_;
    my $ep = $t->endpoint('tcp');
    my $out = "$CTX->{workdir}/idleconn-$t->{name}.out";
    unlink $out;
    my @cmd = ($CTX->{idleconn}, '-h', $ep->{tcp}[0], '-P', $ep->{tcp}[1],
               '-u', $CTX->{user}, '-p', $CTX->{password},
               '-D', $CTX->{db}, '-n', $n);
    pipe(my $r, my $w) or die "pipe: $!\n";
    $_->flush for *STDOUT{IO}, *STDERR{IO};
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        POSIX::setsid();
        open STDIN, '<&', $r or POSIX::_exit(127);
        open STDOUT, '>', $out or POSIX::_exit(127);
        open STDERR, '>&', \*STDOUT or POSIX::_exit(127);
        POSIX::close($_) for grep { $_ > 2 } map { /(\d+)$/ ? $1 : () }
            glob('/proc/self/fd/*');
        exec { $cmd[0] } @cmd or print STDERR "exec $cmd[0]: $!\n";
        POSIX::_exit(127);
    }
    close $r;
    my $ic = { pid => $pid, w => $w, out => $out, t0 => time };
    guard("pid $pid " . (proc_starttime($pid) // 0));
    $ic->{tok} = on_cleanup('idleconn', sub { idleconn_close($ic) });
    my $state = '';
    poll_until(60 + $n / 100, sub {
        $state = slurp($out) // '';
        $state =~ /^(?:READY|ERROR)/m || !pid_alive($pid);
    });
    $ic->{secs} = time - $ic->{t0};
    return $ic if $state =~ /^READY $n$/m;
    my $err = $state =~ /^(ERROR.*)$/m ? $1
        : pid_alive($pid) ? "not ready after " . int($ic->{secs}) . ' s'
        : "exited: $state";
    idleconn_close($ic);
    die "idleconn: $err\n";
}

# Closing its stdin makes idleconn close the sessions and exit.
sub idleconn_close {
    my ($ic) = @_;
    return unless $ic->{pid};
    close $ic->{w} if $ic->{w};
    delete $ic->{w};
    if (!wait_exit($ic->{pid}, 60)) {
        kill 'KILL', -$ic->{pid};
        wait_exit($ic->{pid}, 5);
    }
    Sluice::Sandbox::exit_status($ic->{pid});
    unguard("pid $ic->{pid}");
    cancel_cleanup($ic->{tok});
    delete $ic->{pid};
}


# --- throughput ------------------------------------------------------------

sub series_of {
    my (@targets) = @_;
    my @s;
    for my $t (@targets) {
        my %can = map { $_ => 1 } $t->transports;
        for my $tr (grep { $can{$_} } @{ $opt{transports} }) {
            push @s, { id => "$t->{name}/$tr", target => $t,
                       transport => $tr };
        }
    }
    return @s;
}

sub workloads {
    my @w;
    for my $wl (@{ $opt{workloads} }) {
        for my $ps (@{ $opt{ps_modes} }) {
            push @w, { id => "$wl/$ps", name => $wl, script => $SCRIPT{$wl},
                       args => $SCRIPT_ARGS{$wl} // [], ps => $ps };
        }
    }
    return @w;
}

sub throughput_phase {
    my (@targets) = @_;
    my $t0 = time;
    my @tok = map { start_target($_) } @targets;
    my @series = series_of(@targets);
    my @wls = workloads();
    my %points;
    warm_up(@series);
    my $npoints = @wls * @{ $opt{threads} };
    my $done = 0;
    my $tp = time;
    for my $wl (@wls) {
        for my $th (@{ $opt{threads} }) {
            for my $round (1 .. $opt{rounds}) {
                for my $s (@series) {
                    my $key = "$wl->{id}|$s->{id}|$th";
                    push @{ $points{$key}{runs} },
                        measure($s, $wl, $th, $round);
                }
            }
            $done++;
            progress($wl, $th, \@series, \%points, $done, $npoints, $tp);
        }
    }
    stop_target($targets[$_], $tok[$_]) for reverse 0 .. $#targets;
    $CTX->{phases}{throughput} = time - $t0;
    return { series => \@series, workloads => \@wls, points => \%points };
}

# One unrecorded second per series: connections, caches and the thread
# pool are warm before the first measured point.
sub warm_up {
    my (@series) = @_;
    note('warming up %d series', scalar @series);
    my ($wl) = workloads();
    for my $s (@series) {
        my $r = run_sysbench($s, $wl, max(@{ $opt{threads} }), 1, 'warmup');
        ctx_note("warm-up of $s->{id} failed: $r->{error}")
            if $r->{error};
    }
}

sub run_sysbench {
    my ($s, $wl, $th, $time, $tag) = @_;
    (my $sid = $s->{id}) =~ tr{/}{_};
    (my $wid = $wl->{id}) =~ tr{/}{_};
    my $log = "$CTX->{workdir}/runs/$wid-$sid-$th-$tag.txt";
    make_path("$CTX->{workdir}/runs");
    my ($rc, $out) = run_capture(
        cmd => sysbench_cmd(script => $wl->{script}, ps => $wl->{ps},
            args => $wl->{args}, threads => $th, time => $time,
            endpoint => $s->{target}->endpoint($s->{transport}),
            user => $CTX->{user}, password => $CTX->{password},
            db => $CTX->{db}, tables => $opt{tables},
            table_size => $opt{table_size}),
        log => $log, timeout => $time + 120);
    my $r = sysbench_parse($out);
    $r->{error} //= "sysbench exited with $rc" if $rc;
    $r->{error} .= " (see $log)" if $r->{error};
    return $r;
}

# One sysbench run, with the CPU time of the proxy, the servers, sysbench
# and the whole machine read before and after.  The proxy's time is taken
# after the primary is back to its baseline connections, so closing the
# run's sessions is counted too.
sub measure {
    my ($s, $wl, $th, $round) = @_;
    my $t = $s->{target};
    my $counts;
    if ($t->{causal}) {
        wait_replica();
        $counts = causal_snapshot();
    }
    my @pids = $t->cpu_pids;
    my $p0 = _ticks(@pids);
    my $srv0 = _ticks(@{ $CTX->{server_pids} });
    my ($busy0) = machine_ticks();
    my @tm0 = POSIX::times();
    my $w0 = time;

    my $r = run_sysbench($s, $wl, $th, $opt{time}, "r$round");
    my $backlog = $counts ? replica_backlog() : undef;
    wait_settled(30);

    my $wall = time - $w0;
    my @tm1 = POSIX::times();
    my ($busy1) = machine_ticks();
    my $srv1 = _ticks(@{ $CTX->{server_pids} });
    my @pids1 = $t->cpu_pids;
    my $p1 = _ticks(@pids1);
    return $r if $r->{error};
    causal_counts($r, $counts, causal_snapshot(), $backlog) if $counts;
    if (_pidset(@pids) ne _pidset(@pids1) || !defined $p0 || !defined $p1) {
        $r->{error} = "$t->{name}: its processes changed during the run "
            . '(a worker died?)';
        push @{ $t->{problems} }, "$r->{error}: "
            . _pidset(@pids) . ' -> ' . _pidset(@pids1);
        return $r;
    }
    my $hz = clk_tck();
    my $sysb = ($tm1[3] + $tm1[4]) - ($tm0[3] + $tm0[4]);
    my $q = $r->{queries};
    $r->{cpu_us_per_query} = @pids ? ($p1 - $p0) / $hz * 1e6 / $q : undef;
    $r->{proxy_cpu_s} = @pids ? ($p1 - $p0) / $hz : undef;
    $r->{server_cpu_us_per_query} = ($srv1 - $srv0) / $hz * 1e6 / $q
        if defined $srv0 && defined $srv1;
    $r->{other_cores} = max(0, (($busy1 - $busy0) - ($p1 // 0) + ($p0 // 0)
        - (($srv1 // 0) - ($srv0 // 0)) - $sysb) / $hz / $wall);
    return $r;
}

sub _ticks {
    my (@pids) = @_;
    my $sum = 0;
    for (@pids) {
        my $v = cpu_ticks($_->[0]);
        return undef unless defined $v;
        $sum += $v;
    }
    return $sum;
}

sub _pidset { join ',', map { "$_->[0]:$_->[1]" } @_ }

sub progress {
    my ($wl, $th, $series, $points, $done, $total, $t0) = @_;
    my @parts;
    for my $s (@$series) {
        my @q = map { $_->{qps} // () }
                @{ $points->{"$wl->{id}|$s->{id}|$th"}{runs} };
        my @q2 = sort { $a <=> $b } @q;
        push @parts, sprintf '%s %s', $s->{id},
            @q2 ? int($q2[$#q2 / 2]) : 'ERR';
    }
    my $el = time - $t0;
    note('[%d/%d, %d s left] %s %d thr: %s', $done, $total,
         $el / $done * ($total - $done), $wl->{id}, $th,
         join(', ', @parts));
}


# --- main ------------------------------------------------------------------

sub main {
    parse_args(@_);
    $CTX = make_context();
    my $cmd = 'contrib/bench/run' . (@_ ? ' ' . shell_quote(@_) : '');
    note('%s (open files limit %d)', $cmd, $CTX->{nofile});
    prepare_binaries();
    hold_cpu_latency();
    start_sandbox();
    versions();
    prepare_tables();
    causal_prepare() if $opt{causal};
    my @targets = make_targets();
    my $idle = $opt{idle_conns} > 0 ? idle_phase(@targets) : [];
    my $tp = throughput_phase(@targets);
    my %res = (%$tp, idle => $idle, ctx => $CTX, opt => \%opt,
               command => $cmd, targets => \@targets,
               analysis => "$FindBin::RealBin/analysis.md");
    $CTX->{phases}{total} = time - $CTX->{started};
    aggregate(\%res);
    make_path($opt{output});
    write_markdown(\%res, "$opt{output}/benchmarks.md");
    # --causal's points are settings, not a curve over threads
    write_plots(\%res, $opt{output}) unless $opt{causal};
    print_summary(\%res);
    if ($opt{sandbox}) {
        note('the sandbox stays up: %s (stop it with '
            . 'contrib/sandbox/sluice-sandbox stop %s)', $opt{sandbox},
            $opt{sandbox});
    }
    return 0;
}

catch_signals();
my $rc = eval { main(@ARGV) };
if (!defined $rc) {
    fail_msg($@);
    my $sig = interrupted();
    $rc = !$sig ? 1 : 128 + { HUP => 1, INT => 2, TERM => 15 }->{$sig};
}
cleanup_all();
exit $rc;
