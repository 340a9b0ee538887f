package Sluice::Test;

# The harness every t/*.t uses: a test directory, a config written from a
# template, sluice started and stopped, clients, and the check at the end
# of each test that sluice left no alert, crit or sanitizer report.
# See the POD at the end for the API.
#
# The MariaDB primary/replica come from the environment (SLUICE_SANDBOX and
# friends, as t/run-tests exports them: one sandbox per run) or, when
# those are not set, from a private sandbox started on first use and
# stopped at the end of the test file, so `prove t/foo.t` works alone.

use strict;
use warnings;

use Carp qw(croak);
use Cwd qw(abs_path);
use DBI;
use Exporter qw(import);
use File::Basename qw(basename dirname);
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use IO::Socket::UNIX;
use Scalar::Util qw(weaken blessed);
use Test::More ();

use Sluice::Guardian;
use Sluice::Sandbox qw(free_port spawn pid_alive wait_exit proc_cmdline
                       proc_starttime poll_until slurp tail_file find_bin);

our @EXPORT = qw(wait_for);

# The source tree: this file is TOP/t/lib/Sluice/Test.pm.
our $TOP = abs_path(dirname(__FILE__) . '/../../..');

use constant {
    RUN_TIMEOUT  => 10,   # sluice listens and has its workers
    QUIT_TIMEOUT => 10,   # graceful stop, before SIGTERM
    TERM_TIMEOUT => 5,    # then SIGKILL
    CMD_TIMEOUT  => 30,   # mariadb client, sluice -t, sluice -V
    TAIL_LINES   => 20,   # of each log, when sluice does not start
    ERRLOG_LINES => 200,  # of each log, SLUICE_TEST_ERRLOG at a failure
    ERRLOG_BYTES => 64 * 1024,
};

my $OWNER = $$;     # forked children of a test never clean up
my @OBJECTS;        # live test objects (weak refs), finished in END
my @DIRS;           # test directories, removed in END unless kept
my @PRIVATE;        # sandboxes this process started: { sandbox, dir }
my @CLAIMS;         # port claim files to release in END
my ($MARIADB, $REDIS);      # sandboxes providing them
# A test killed outright (SIGKILL, a crash of perl) runs no END block:
# its guardian then kills the sluice it ran and stops its private sandbox,
# keeping the files as a failed test does.  See Sluice::Guardian.
my $GUARDIAN = Sluice::Guardian->new;
my %MODULES;        # binary => [ modules from sluice -V ]
my $SIGNALS_SET;

my $SANITIZER = qr/ERROR:[ ](?:Address|Leak|Memory|Thread)Sanitizer
                  |WARNING:[ ]ThreadSanitizer|runtime[ ]error:/x;


# --- test object ---------------------------------------------------------

# new(%opts): a test with its own directory.
#   globals => 0     do not prepend the test globals to sluice.conf
#   conf => NAME     config file name (default sluice.conf)
sub new {
    my ($class, %o) = @_;
    my $name = basename($0);
    $name =~ s/\.t\z//;
    $name =~ s/\W/_/g;        # usable in table names too
    my $dir = tempdir("$name-XXXXXX", DIR => _tmp_root());
    push @DIRS, $dir;
    my $self = bless {
        name     => $name,
        dir      => $dir,
        globals  => $o{globals} // 1,
        conf     => $o{conf} // 'sluice.conf',
        ports    => {},
        allow    => [],
        problems => [],
        dbhs     => [],
        sent     => {},
        owner    => $$,
    }, $class;
    push @OBJECTS, $self;
    weaken($OBJECTS[-1]);
    _set_signals();
    return $self;
}

sub testdir { $_[0]{dir} }
sub name    { $_[0]{name} }

sub binary {
    my $bin = $ENV{SLUICE_BINARY} // "$TOP/objs/sluice";
    croak "sluice binary $bin not found: run ./configure && make, "
        . 'or set SLUICE_BINARY' unless -x $bin;
    return $bin;
}

# $t->plan(N): N tests of the file, plus the final clean-exit check.
sub plan {
    my ($self, $n) = @_;
    $self->{planned} = 1;
    Test::More::plan(tests => $n + 1);
    return $self;
}

# $t->done_testing: the final check, then Test::More's done_testing.
sub done_testing {
    my ($self) = @_;
    $self->_finish;
    Test::More::done_testing();
}

sub _tmp_root {
    my $root = $ENV{TMPDIR} || "$TOP/t/tmp";
    make_path($root);
    return $root;
}

sub _set_signals {
    return if $SIGNALS_SET++;
    for my $sig (qw(INT TERM HUP)) {
        next if $SIG{$sig} && $SIG{$sig} ne 'DEFAULT';
        # exit runs the END block, which stops what the test started
        $SIG{$sig} = sub { Test::More::diag("caught SIG$sig"); exit 1 };
    }
}


# --- sandbox: primary, replica, redis ------------------------------------

sub _reserve_dir {
    my $env = Sluice::Sandbox->from_env;
    return $env ? $env->dir . '/ports' : _tmp_root() . '/sluice-ports';
}

# A sandbox of the test's own, stopped and removed at its end; not started.
# mariadbd_args => [...]: options for both servers, after the common ones
# (so --skip-name-resolve=OFF turns one of those off); replica_binlog => 1:
# the replica keeps a binlog of what it applies (it can be promoted).
sub _private_sandbox {
    my (%o) = @_;
    my $dir = tempdir('sandbox-XXXXXX', DIR => _tmp_root());
    my $sb = Sluice::Sandbox->new(dir => "$dir/sb",
                                  reserve_dir => _reserve_dir(),
                                  mariadbd_args => $o{mariadbd_args},
                                  replica_binlog => $o{replica_binlog});
    push @PRIVATE, { sandbox => $sb, dir => $dir };
    $GUARDIAN->add_sandbox($sb->dir, keep => 1);
    return $sb;
}

sub _mariadb {
    return $MARIADB if $MARIADB;
    if (my $env = Sluice::Sandbox->from_env) {
        return $MARIADB = $env;
    }
    my $sb = _private_sandbox();
    $sb->start;
    Test::More::note(sprintf 'private sandbox started in %.2f s in %s',
                     $sb->start_time, $sb->dir);
    return $MARIADB = $sb;
}

sub _redis {
    return $REDIS if $REDIS;
    my $env = Sluice::Sandbox->from_env;
    return $REDIS = $env if $env && $env->has_redis;
    my $sb = $MARIADB && !$MARIADB->attached ? $MARIADB : undef;
    if ($sb) {
        $sb->start_redis;
    } else {
        $sb = _private_sandbox();
        $sb->start(mariadb => 0, redis => 1);
    }
    return $REDIS = $sb;
}

sub primary_port   { _mariadb()->port('primary') }
sub replica_port   { _mariadb()->port('replica') }
sub primary_socket { _mariadb()->socket('primary') }
sub replica_socket { _mariadb()->socket('replica') }
sub redis_port     { _redis()->port('redis') }
sub redis_socket   { _redis()->socket('redis') }
sub primary        { '127.0.0.1:' . $_[0]->primary_port }
sub replica        { '127.0.0.1:' . $_[0]->replica_port }
sub redis          { '127.0.0.1:' . $_[0]->redis_port }

# $t->port(N): a free loopback port, the same for the same N in this test.
sub port {
    my ($self, $n) = @_;
    $n //= 0;
    return $self->{ports}{$n} //= do {
        my $rdir = _reserve_dir();
        my $p = free_port(reserve_dir => $rdir);
        push @CLAIMS, "$rdir/$p";
        $p;
    };
}


# --- files ---------------------------------------------------------------

sub test_globals {
    my ($self) = @_;
    my $d = $self->{dir};
    return "daemon off;\npid $d/sluice.pid;\nerror_log $d/error.log debug;\n";
}

sub write_file {
    my ($self, $name, $content) = @_;
    my $path = "$self->{dir}/$name";
    make_path(dirname($path));
    open(my $fh, '>', $path) or die "$path: $!\n";
    print $fh $content;
    close $fh or die "$path: $!\n";
    return $self;
}

# Placeholders: %%PRIMARY%% %%REPLICA%% %%REDIS%% (127.0.0.1:port),
# %%PRIMARY_PORT%% and the like, %%PRIMARY_SOCKET%% %%REPLICA_SOCKET%%
# %%REDIS_SOCKET%%, %%PORT_N%%, %%TESTDIR%%, %%TEST_GLOBALS%%.
sub expand {
    my ($self, $text) = @_;
    $text =~ s/%%(\w+)%%/$self->_placeholder($1)/ge;
    return $text;
}

my %PLACEHOLDER = (
    PRIMARY        => 'primary',        REPLICA        => 'replica',
    REDIS          => 'redis',          PRIMARY_PORT   => 'primary_port',
    REPLICA_PORT   => 'replica_port',   REDIS_PORT     => 'redis_port',
    PRIMARY_SOCKET => 'primary_socket', REPLICA_SOCKET => 'replica_socket',
    REDIS_SOCKET   => 'redis_socket',   TESTDIR        => 'testdir',
    TEST_GLOBALS   => 'test_globals',
);

sub _placeholder {
    my ($self, $key) = @_;
    return $self->port($1) if $key =~ /^PORT_(\d+)\z/;
    my $m = $PLACEHOLDER{$key} or croak "unknown placeholder %%$key%%";
    return $self->$m;
}

# Like write_file, with placeholders expanded; the config file gets the
# test globals in front unless globals => 0 or it places %%TEST_GLOBALS%%.
sub write_file_expand {
    my ($self, $name, $content) = @_;
    $content = "%%TEST_GLOBALS%%\n$content"
        if $name eq $self->{conf} && $self->{globals}
           && $content !~ /%%TEST_GLOBALS%%/;
    return $self->write_file($name, $self->expand($content));
}

sub read_file {
    my ($self, $name) = @_;
    return slurp("$self->{dir}/$name");
}

sub error_log { $_[0]->read_file('error.log') // '' }

# Lines of error.log (or file => NAME) matching $re; in scalar context,
# how many.
sub grep_log {
    my ($self, $re, %o) = @_;
    my $c = $self->read_file($o{file} // 'error.log') // '';
    my @l = grep { $_ =~ $re } split /\n/, $c;
    return wantarray ? @l : scalar @l;
}

# Alert and crit lines matching $re are expected: the final check skips
# them.
sub allow_log {
    my ($self, $re) = @_;
    push @{ $self->{allow} }, $re;
    return $self;
}


# --- running sluice ------------------------------------------------------

sub _conf_path {
    my ($self, $conf) = @_;
    $conf //= $self->{conf};
    return $conf =~ m{^/} ? $conf : "$self->{dir}/$conf";
}

# What `listen` lines of a config name: { port => N } or { unix => PATH }.
sub _listen_addrs {
    my ($text) = @_;
    $text =~ s/#[^\n]*//g;
    my @l;
    while ($text =~ /(?:^|[\s;{}])listen\s+(["']?)([^\s;"']+)\1/g) {
        my $a = $2;
        if ($a =~ /^unix:(.+)/) {
            push @l, { unix => $1 };
        } elsif ($a =~ /(?:^|:)(\d+)\z/) {
            push @l, { port => $1 };
        }
    }
    return @l;
}

# Ports in LISTEN state, from the kernel's socket tables: unlike a probe
# connection, this leaves no session in sluice's logs and counters.
sub _listening_ports {
    my %p;
    for my $f ('/proc/net/tcp', '/proc/net/tcp6') {
        open(my $fh, '<', $f) or next;
        while (<$fh>) {
            my (undef, $local, undef, $st) = split ' ';
            next unless defined $st && $st eq '0A';
            $p{ hex $1 } = 1 if $local =~ /:([0-9A-F]+)\z/;
        }
    }
    return \%p;
}

# run(%opts): start sluice and wait until every listen address of the
# config is listening and, with `worker_processes N;`, N workers run.
#   conf => NAME      another config file of the test directory
#   args => [...]     more command line arguments
#   env => {...}      more environment (ASAN_OPTIONS, ...)
#   timeout => S      (10)
#   may_fail => 1     return undef instead of dying if it does not start;
#                     $t->run_error says why
sub run {
    my ($self, %o) = @_;
    croak 'sluice is already running' if $self->{pid};
    my $conf = $self->_conf_path($o{conf});
    my $text = slurp($conf) // croak "no config $conf";
    my @listen = _listen_addrs($text);
    my ($workers) = $text =~ /^\s*worker_processes\s+(\d+)\s*;/m;
    $workers = 0 if $text =~ /^\s*master_process\s+off\s*;/m;

    my @catalogs = _cached_upstreams($text);
    my $log_off = -s "$self->{dir}/error.log" // 0;
    my $pid = spawn(
        cmd => [ $self->binary, '-p', "$self->{dir}/", '-c', $conf,
                 @{ $o{args} // [] } ],
        log => "$self->{dir}/stderr.log", env => $o{env});
    $self->{pid} = $pid;
    $self->{sent} = {};
    $GUARDIAN->add_pid($pid);

    my $why = '';
    my $ok = poll_until($o{timeout} // RUN_TIMEOUT, sub {
        if (!pid_alive($pid)) {
            my $st = Sluice::Sandbox::exit_status($pid);
            $why = 'sluice exited ' . _describe_status($st);
            # failing to start may be what the test wants; crashing not
            push @{ $self->{problems} }, "while starting, $why"
                if defined $st && $st & 127;
            delete $self->{pid};
            $GUARDIAN->forget_pid($pid);
            kill 'KILL', -$pid;
            return 1;
        }
        my $lp = _listening_ports();
        my @missing = map { $_->{unix} // $_->{port} }
            grep { $_->{unix} ? !-S $_->{unix} : !$lp->{ $_->{port} } }
            @listen;
        if (@missing) {
            $why = "not listening on @missing";
            return 0;
        }
        my $n = () = $self->worker_pids;
        if ($workers && $n < $workers) {
            $why = "$n of $workers workers running";
            return 0;
        }
        # a cache stores nothing until its upstream's schema catalog is
        # loaded: tests start once it is
        my $log = substr($self->error_log, $log_off);
        my @wait = grep { $log !~ /upstream "\Q$_\E": schema catalog loaded/ }
                   @catalogs;
        if (@wait) {
            $why = "no schema catalog of upstream @wait";
            return 0;
        }
        $why = '';
        return 1;
    });
    return $self if $ok && $why eq '';

    $why ||= 'timed out';
    $self->stop(quiet => 1) if $self->{pid};
    $self->{run_error} = "$why\n" . _logs_tail($self->{dir}, TAIL_LINES);
    return undef if $o{may_fail};
    die "sluice did not start: $self->{run_error}";
}

sub run_error { $_[0]{run_error} }

# The upstreams of the server {} blocks that list the cache filter, whose
# schema catalog a run waits for (a blind monitor account: it never comes).
sub _cached_upstreams {
    my ($text) = @_;
    my %up;
    for my $block ($text =~ /\bserver\s*\{([^{}]*)\}/g) {
        next unless $block =~ /^\s*filters\s[^;]*\bcache\b/m;
        $up{$1} = 1 if $block =~ /^\s*upstream\s+(\S+)\s*;/m;
    }
    return sort keys %up;
}

# The last $lines lines of sluice's stderr.log and error.log in $dir
# (of their last $bytes bytes, if given), each under a header.
sub _logs_tail {
    my ($dir, $lines, $bytes) = @_;
    my $most = "the last $lines lines" . ($bytes ? ", $bytes bytes" : '');
    return join '', map { "--- $_ ($most at most):\n"
        . tail_file("$dir/$_", $lines, $bytes) } qw(stderr.log error.log);
}

sub _describe_status {
    my ($st) = @_;
    return 'unknown status' unless defined $st;
    return 'on signal ' . ($st & 127) . ($st & 128 ? ' (core dumped)' : '')
        if $st & 127;
    return 'with status ' . ($st >> 8);
}

sub master_pid {
    my ($self) = @_;
    my $pid = $self->{pid};
    return $pid && pid_alive($pid) ? $pid : undef;
}

# Children of the master titled "sluice: worker process", ascending; in
# scalar context, how many.
sub worker_pids { $_[0]->role_pids('worker') }

# The same for the processes of a role: "sluice: NAME process".
sub role_pids {
    my ($self, $name) = @_;
    my $master = $self->{pid} or return ();
    opendir(my $d, '/proc') or return ();
    my @w;
    for my $p (grep { /^\d+\z/ } readdir $d) {
        my $stat = slurp("/proc/$p/stat") // next;
        $stat =~ s/^.*\)\s+//s;
        my ($state, $ppid) = split ' ', $stat;
        next unless defined $ppid && $ppid == $master
            && $state ne 'Z' && $state ne 'X';
        my $cmd = proc_cmdline($p) // next;
        push @w, $p if $cmd =~ /^sluice: \Q$name\E process/;
    }
    return wantarray ? sort { $a <=> $b } @w : scalar @w;
}

sub signal {
    my ($self, $sig) = @_;
    my $pid = $self->{pid} or croak 'sluice is not running';
    $sig =~ s/^SIG//;
    $self->{sent}{$sig} = 1;
    kill $sig, $pid or croak "kill $sig $pid: $!";
    return $self;
}

# Sluice::Test::server_status($dbh, NAME): a global status counter of the
# server $dbh is on (Com_select, Com_stmt_execute...).
# server_status($root_dbh, NAME): a global status variable of the server,
# but for Com_select: the server's SELECTs less those of the proxy's
# monitor accounts (named `monitor` or `*_mon`), which check servers and
# load their schema catalog at times of their own.  Those are told by
# SHOW USER_STATISTICS (userstat is turned on at the first call), counted
# once a statement ended: so the count is taken when no monitor statement
# runs and none started meanwhile.  Nothing here is a SELECT itself.
sub _monitor_selects {
    my ($dbh) = @_;
    my $n = 0;
    for my $row (@{ $dbh->selectall_arrayref('SHOW USER_STATISTICS',
                                              { Slice => {} }) }) {
        $n += $row->{Select_commands} // 0
            if _is_monitor($row->{User});
    }
    return $n;
}
sub _is_monitor { $_[0] eq 'monitor' || $_[0] =~ /_mon\z/ }
sub _monitor_busy {
    my ($dbh) = @_;
    return grep { ($_->{Command} // '') eq 'Query' && _is_monitor($_->{User})
                } @{ $dbh->selectall_arrayref('SHOW PROCESSLIST',
                                               { Slice => {} }) };
}
sub server_status {
    my ($dbh, $name) = @_;
    my $status = sub {
        ($dbh->selectrow_array('SHOW GLOBAL STATUS LIKE ?', undef, $_[0]))[1]
    };
    return $status->($name) if $name ne 'Com_select';
    $dbh->do('SET GLOBAL userstat = 1')
        if ($dbh->selectrow_array("SHOW GLOBAL VARIABLES LIKE 'userstat'"))[1]
           ne 'ON';
    my $v;
    poll_until(5, sub {
        return 0 if _monitor_busy($dbh);
        my $m0 = _monitor_selects($dbh);
        my $c = $status->('Com_select');
        return 0 if _monitor_selects($dbh) != $m0 || _monitor_busy($dbh);
        $v = $c - $m0;
        return 1;
    });
    return $v // $status->('Com_select');
}
sub status_delta {
    my ($dbh, $name, $code) = @_;
    my $before = server_status($dbh, $name);
    $code->();
    return server_status($dbh, $name) - $before;
}

# $t->cache_stats(ZONE): the counters of a cache zone, as `sluice -s
# stats` (SIGUSR2) logs them: { lookups => N, hits => N, replica => N, ... },
# and its Redis tier's, once used: { redis_hits => N, ... }
sub cache_stats {
    my ($self, $zone) = @_;
    my $off = length $self->error_log;
    $self->signal('USR2');
    my ($a, $b, $c, $r);
    wait_for(sub {
        my $log = substr($self->error_log, $off);
        ($a) = $log =~ /(cache zone "\Q$zone\E": lookups=.*)/;
        ($b) = $log =~ /(cache zone "\Q$zone\E": not stored: .*)/;
        ($c) = $log =~ /(cache zone "\Q$zone\E": not cacheable: .*)/;
        ($r) = $log =~ /cache zone "\Q$zone\E": redis: (.*)/;
        $a && $b && $c }, what => "the stats of $zone");
    my %r = ($r // '') =~ /(\w+)=(\d+)/g;
    return { (map { /(\w+)=(\d+)/g } grep { defined } $a, $b, $c),
             map { ("redis_$_" => $r{$_}) } keys %r };
}

# Sluice::Test::binlog_account($dbh, NAME, PASSWORD): an account, made
# afresh on the server of $dbh (a primary), that reads the binlog
# (REPLICATION SLAVE) and sees the replicas' server ids (REPLICATION
# MASTER ADMIN): a `binlog_user`.  Name it *_mon and its SELECTs stay out
# of Com_select (server_status).
sub binlog_account {
    my ($dbh, $name, $pw) = @_;
    $dbh->do("CREATE OR REPLACE USER '$name'\@'%' IDENTIFIED BY ?", undef,
             $pw);
    $dbh->do("GRANT REPLICATION SLAVE, REPLICATION MASTER ADMIN ON *.* "
             . "TO '$name'\@'%'");
}

# $t->redis_stats(SERVICE): what `sluice -s stats` logs of the Redis
# service's pushed invalidations: { push => 'on', subscriber => 'live',
# received => N, own => N, bad => N, latency_max_ms => N, ... }
sub redis_stats {
    my ($self, $rs) = @_;
    my $off = length $self->error_log;
    $self->signal('USR2');
    my $line;
    wait_for(sub { ($line) = substr($self->error_log, $off)
                       =~ /(redis "\Q$rs\E": push=.*)/ },
             what => "the push stats of redis $rs");
    return { map { /(\w+)=(\S+)/g } $line // '' };
}

# $t->binlog_stats(UPSTREAM): what `sluice -s stats` logs of the
# upstream's binlog reader: { state => 'live', pid => N, server_id => N,
# position => 'D-S-N', all_position => N, ... }
sub binlog_stats {
    my ($self, $up) = @_;
    my $off = length $self->error_log;
    $self->signal('USR2');
    my $line;
    wait_for(sub { ($line) = substr($self->error_log, $off)
                       =~ /(cache binlog "\Q$up\E": .*)/ },
             what => "the stats of binlog $up");
    return { map { /(\w+)=(\S+)/g } $line // '' };
}

# HUP, then wait until a new worker runs (or, if there were no workers,
# until the log says `reconfiguring`).  Returns true on success.
sub reload {
    my ($self, %o) = @_;
    my %old = map { $_ => 1 } $self->worker_pids;
    my $off = length $self->error_log;
    $self->signal('HUP');
    return wait_for(sub {
        return 1 if grep { !$old{$_} } $self->worker_pids;
        return !%old && substr($self->error_log, $off) =~ /reconfiguring/;
    }, timeout => $o{timeout} // RUN_TIMEOUT, what => 'reload');
}

# Kill one worker (pid => P, default the youngest: after a reload, older
# ones may be finishing their sessions and would not be replaced; signal
# => S, default KILL) and, unless wait => 0, wait until the master has
# started another.  Alerts mentioning that pid are allowed.  Returns the
# killed pid.
sub kill_worker {
    my ($self, %o) = @_;
    my %before = map { $_ => proc_starttime($_) // 0 } $self->worker_pids;
    my ($youngest) = sort { $before{$b} <=> $before{$a} || $b <=> $a }
        keys %before;
    my $pid = $o{pid} // $youngest // croak 'no worker to kill';
    $self->allow_log(qr/\b\Q$pid\E\b/);
    kill $o{signal} // 'KILL', $pid or croak "kill $pid: $!";
    my $gone = wait_for(sub { !grep { $_ == $pid } $self->worker_pids },
                        what => "worker $pid to exit");
    return $pid if !$gone || !($o{wait} // 1);
    wait_for(sub { grep { !exists $before{$_} } $self->worker_pids },
             what => "a worker to replace $pid");
    return $pid;
}

# QUIT, then TERM after a deadline, then KILL; waits for the master and
# its workers to exit.  timeout => S for the QUIT phase.
sub stop {
    my ($self, %o) = @_;
    my $pid = $self->{pid} or return $self;
    my @workers = $self->worker_pids;
    my $was_running = pid_alive($pid);
    my $how = '';
    if ($was_running) {
        for my $step (['QUIT', $o{timeout} // QUIT_TIMEOUT],
                      ['TERM', TERM_TIMEOUT], ['KILL', TERM_TIMEOUT]) {
            my ($sig, $t) = @$step;
            $self->{sent}{$sig} = 1;
            kill $sig, $pid;
            if (wait_exit($pid, $t)) { $how = $sig; last }
        }
    }
    my $st = Sluice::Sandbox::exit_status($pid);
    $self->{exit_status} = $st;
    delete $self->{pid};

    my @notes;
    push @notes, "sluice did not exit on SIGQUIT, needed SIG$how"
        if $was_running && $how ne 'QUIT';
    if (defined $st && ($st & 127) && !$self->{sent}{ _signame($st & 127) }) {
        push @notes, 'sluice master exited ' . _describe_status($st);
    }
    # workers go with their master
    if (grep { !wait_exit($_, TERM_TIMEOUT) } @workers) {
        push @notes, 'workers outlived the master';
    }
    kill 'KILL', -$pid;     # its process group: anything left over
    $GUARDIAN->forget_pid($pid);

    if (@notes && !$o{quiet}) {
        # at the end of the test nobody holds a connection any more, so a
        # slow or failed stop is sluice's fault; during the test it may
        # be the test's
        if ($o{final}) {
            push @{ $self->{problems} }, @notes;
        } else {
            Test::More::diag($_) for @notes;
        }
    }
    return $self;
}

sub exit_status { $_[0]{exit_status} }

sub _signame {
    my ($n) = @_;
    require Config;
    my @names = split ' ', $Config::Config{sig_name};
    return $names[$n] // $n;
}

# Resident memory in kB of $pid (default: the only worker, else master).
sub rss_kb {
    my ($self, $pid) = @_;
    if (!$pid) {
        my @w = $self->worker_pids;
        $pid = @w == 1 ? $w[0] : $self->{pid};
    }
    my $s = slurp("/proc/$pid/status") // return undef;
    return $s =~ /^VmRSS:\s+(\d+)\s+kB/m ? $1 : undef;
}

# Run a command, capturing stdout and stderr: (exit code, out, err).
sub _capture {
    my ($self, %o) = @_;
    my $n = ++$self->{captures};
    my $base = "$self->{dir}/cmd-$n";
    my %io = (stdout => "$base.out", stderr => "$base.err");
    if (defined $o{stdin}) {
        $self->write_file("cmd-$n.in", $o{stdin});
        $io{stdin} = "$base.in";
    }
    my $pid = spawn(cmd => $o{cmd}, %io, same_session => 1,
                    env => $o{env}, chdir => $o{chdir});
    my $rc;
    if (wait_exit($pid, $o{timeout} // CMD_TIMEOUT)) {
        my $st = Sluice::Sandbox::exit_status($pid);
        $rc = $st & 127 ? 128 + ($st & 127) : $st >> 8;
    } else {
        kill 'KILL', $pid;
        wait_exit($pid, 5);
        Sluice::Sandbox::exit_status($pid);
        $rc = -1;
    }
    my ($out, $err) = map { slurp($io{$_}) // '' }
        qw(stdout stderr);
    unlink grep { defined } values %io;
    return ($rc, $out, $err);
}

# $t->run_client(cmd => [...], timeout => S, env => {...}, chdir => DIR,
#                stdin => TEXT): a client program to its end, killed after
# S seconds (default 30): (exit code or -1 if killed, stdout, stderr).
sub run_client {
    my ($self, %o) = @_;
    return $self->_capture(%o);
}

# $t->need($ok, $why): a test needing a client library or tool that
# contrib/deps.sh installs goes on if $ok.  Else it fails, so that a
# missing package cannot pass for a green run (the README's test command,
# which CI runs as it is, installs them all); a developer without them
# sets SLUICE_TEST_ALLOW_SKIP=1 to have such tests skipped instead.
sub need {
    my ($self, $ok, $why) = @_;
    return 1 if $ok;
    Test::More::plan(skip_all => $why) if $ENV{SLUICE_TEST_ALLOW_SKIP};
    Test::More::plan(tests => 1);
    Test::More::fail("$why (SLUICE_TEST_ALLOW_SKIP=1 skips instead)");
    exit 1;
}

# $t->have($ok, $why): the same for a part of a file, in a SKIP block:
# true to run it; false to skip it, after a failing test unless skipping
# is allowed.
sub have {
    my ($self, $ok, $why) = @_;
    return 1 if $ok;
    Test::More::fail("$why (SLUICE_TEST_ALLOW_SKIP=1 skips instead)")
        unless $ENV{SLUICE_TEST_ALLOW_SKIP};
    return 0;
}

# $t->run_cache(plan => N, workers => W, filters => LIST, server => TEXT):
# sluice with one server on PORT_0, readconn to the sandbox's primary
# behind the query cache (zone qc of 8 MB, cache_ttl 60s; `filters` is
# `cache` unless LIST is given, TEXT goes into its server {}), started,
# N tests planned.
sub run_cache {
    my ($self, %o) = @_;
    my $workers = $o{workers} // 1;
    my $filters = $o{filters} // 'cache';
    my $more = $o{server} // '';
    my $mysql = $o{mysql} // '';
    my $up = $o{upstream} // '';
    $self->write_file_expand('sluice.conf', <<"EOF");
worker_processes $workers;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
$mysql    cache_zone qc size=8m;
    upstream cluster {
        server %%PRIMARY%% role=primary;
        monitor_user monitor; monitor_password "monitor";
$up    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters $filters;
        cache qc;
        cache_ttl 60s;
$more    }
}
EOF
    $self->run;
    $self->plan($o{plan});
    return $self;
}

# $t->run_rwsplit(plan => N, users => { name => password }): sluice with
# one readwritesplit server on PORT_0 in front of the sandbox's primary
# and replica, user app and these, started; N tests planned.  Returns the
# primary's and the replica's @@server_id, by which a test tells which
# server answered.
sub run_rwsplit {
    my ($self, %o) = @_;
    my $users = join '', map { "    user $_ { password \"$o{users}{$_}\"; }\n" }
                sort keys %{ $o{users} // {} };
    $self->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
$users    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream cluster;
    }
}
EOF
    $self->run;
    $self->plan($o{plan});
    return ($self->primary_dbh->selectrow_array('SELECT @@server_id'),
            $self->replica_dbh->selectrow_array('SELECT @@server_id'));
}

# sluice -t: (exit code, stdout and stderr together).
sub test_config {
    my ($self, %o) = @_;
    my ($rc, $out, $err) = $self->_capture(cmd => [
        $self->binary, '-t', '-p', "$self->{dir}/",
        '-c', $self->_conf_path($o{conf}), @{ $o{args} // [] } ]);
    # a bad config must fail cleanly: a crash or a sanitizer report is
    # a problem whatever the test expects
    push @{ $self->{problems} }, "sluice -t exited with $rc"
        if $rc > 128 || $rc < 0;
    push @{ $self->{problems} }, map { "sluice -t: $_" }
        grep { $_ =~ $SANITIZER } split /\n/, $out . $err;
    return ($rc, $out . $err);
}

sub modules {
    my ($self) = @_;
    my $bin = $self->binary;
    $MODULES{$bin} //= do {
        my ($rc, $out, $err) = $self->_capture(cmd => [ $bin, '-V' ]);
        my ($m) = "$out$err" =~ /^modules:[ \t]*(.*)$/m;
        [ split ' ', $m // '' ];
    };
    return @{ $MODULES{$bin} };
}

sub has_module {
    my ($self, $name) = @_;
    return scalar grep { $_ eq $name } $self->modules;
}

# $t->has(MODULE...): true if the binary has every one of these modules
# compiled in; else the whole file is skipped ("no MODULE module", naming
# the first missing one), so call it before the plan.  Modules only, on
# purpose: leaving a module out is a build choice, and its tests rightly
# skip; a missing tool or client library is a machine that lacks what
# contrib/deps.sh installs, which need() and have() turn into a failure.
# has_module asks without skipping.
sub has {
    my ($self, @names) = @_;
    for my $m (@names) {
        next if $self->has_module($m);
        croak "has('$m'): the plan is set, too late to skip the file"
            if Test::More->builder->has_plan;
        # the test modules are built only on request
        my $hint = -d "$TOP/t/modules/$m"
            ? ' (./configure --with-test-modules)' : '';
        Test::More::plan(skip_all => "no $m module$hint");
    }
    return 1;
}


# --- clients -------------------------------------------------------------

my %DBH_DEFAULTS = (
    RaiseError => 0, PrintError => 0, AutoCommit => 1,
    mariadb_connect_timeout => 5,
    mariadb_read_timeout    => 30,
    mariadb_write_timeout   => 30,
);

sub _track {
    my ($self, $dbh) = @_;
    return $dbh unless $dbh;
    push @{ $self->{dbhs} }, $dbh;
    weaken($self->{dbhs}[-1]);
    return $dbh;
}

# dbh(port => N (default port 0), user => 'app', password => 'secret',
#     database => 'test', host => '127.0.0.1' | socket => PATH, %attr):
# a DBD::MariaDB handle or undef ($DBI::errstr says why).  RaiseError
# and PrintError are off; other attributes pass through.
sub dbh {
    my ($self, %o) = @_;
    my $user = exists $o{user}     ? delete $o{user}     : 'app';
    my $pass = exists $o{password} ? delete $o{password} : 'secret';
    my $db   = exists $o{database} ? delete $o{database} : 'test';
    my $sock = delete $o{socket};
    my $host = delete $o{host} // '127.0.0.1';
    my $port = delete $o{port};
    $port = $self->port(0) unless defined $port || defined $sock;
    my $dsn = 'DBI:MariaDB:'
        . ($sock ? "mariadb_socket=$sock" : "host=$host;port=$port")
        . (defined $db ? ";database=$db" : '');
    return $self->_track(
        DBI->connect($dsn, $user, $pass, { %DBH_DEFAULTS, %o }));
}

# Root over the unix socket, database test, RaiseError ON: for setting up
# and checking the servers directly.
sub primary_dbh { $_[0]->_root_dbh($_[0]->primary_socket, @_[1 .. $#_]) }

# $t->server_user($name, $password): an account on the primary (replicated
# to the replica) that may only read the test database; made afresh.
# Returns its mysql_native_password hash ("*HEX", as in mysql.user).
sub server_user {
    my ($self, $name, $password) = @_;
    my $p = $self->primary_dbh;
    $p->do("CREATE OR REPLACE USER '$name'\@'%' IDENTIFIED BY ?", undef,
           $password);
    $p->do("GRANT SELECT ON test.* TO '$name'\@'%'");
    return scalar $p->selectrow_array('SELECT PASSWORD(?)', undef,
                                      $password);
}
sub replica_dbh { $_[0]->_root_dbh($_[0]->replica_socket, @_[1 .. $#_]) }

sub _root_dbh {
    my ($self, $sock, %attr) = @_;
    return $self->_track(DBI->connect(
        "DBI:MariaDB:mariadb_socket=$sock;database=test", 'root', '',
        { %DBH_DEFAULTS, RaiseError => 1, %attr }));
}

# admin_say($socket, @lines): the lines to an admin socket (a path, or
# a name in the test's directory), its whole answer ('' when it cannot
# connect).
sub admin_say {
    my ($self, $path, @lines) = @_;
    $path = "$self->{dir}/$path" unless $path =~ m{^/};
    my $s = IO::Socket::UNIX->new(Peer => $path) or return '';
    print {$s} map { "$_\n" } @lines;
    shutdown($s, 1);
    local $/;
    return <$s> // '';
}

# http_body($port, $path): the body of GET $path from 127.0.0.1:$port (a
# status listener), '' when there is none.
sub http_body {
    my ($self, $port, $path) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port")
        or return '';
    print {$s} "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    local $/;
    my $all = <$s> // '';
    return (split /\r\n\r\n/, $all, 2)[1] // '';
}

# mysql_cli(port => N, user, password, database, sql => '...',
#           args => [...], stdin => TEXT, timeout => S):
# the mariadb client over TCP in batch mode: (exit code, stdout, stderr).
sub mysql_cli {
    my ($self, %o) = @_;
    my $db = exists $o{database} ? $o{database} : 'test';
    my @cmd = (find_bin('mariadb', 'mysql'),
        '--no-defaults', '-h', $o{host} // '127.0.0.1',
        '-P', $o{port} // $self->port(0), '--protocol=tcp',
        '-u', $o{user} // 'app',
        '--password=' . ($o{password} // 'secret'),
        '-N', '-B', '--connect-timeout=5');
    push @cmd, "--database=$db" if defined $db;
    push @cmd, @{ $o{args} // [] };
    push @cmd, '-e', $o{sql} if defined $o{sql};
    return $self->_capture(cmd => \@cmd, stdin => $o{stdin},
                           timeout => $o{timeout});
}


# Sluice::Test::mem_count($pid, $needle): how many times `needle` occurs
# in the readable memory of `pid` (/proc/PID/mem: needs root).  The
# huge mappings (over 128 MiB) are the sanitizer's shadow memory, which
# holds no data; an unreadable page is skipped.
sub mem_count {
    no warnings 'portable';     # 64-bit addresses
    my ($pid, $needle) = @_;
    open(my $maps, '<', "/proc/$pid/maps") or return -1;
    open(my $mem, '<:raw', "/proc/$pid/mem") or return -1;
    my $n = 0;
    while (my $line = <$maps>) {
        my ($lo, $hi, $perms, $name) =
            $line =~ /^([0-9a-f]+)-([0-9a-f]+)\s+(\S+)(?:\s+\S+){3}\s*(.*)$/
            or next;
        ($lo, $hi) = (hex $lo, hex $hi);
        next if $perms !~ /^r/ || $hi - $lo > 128 << 20
                || $name =~ /^\[(?:vvar|vvar_vclock|vsyscall)\]$/;
        my $tail = '';
        for (my $at = $lo; $at < $hi; $at += 1 << 20) {
            my $len = $hi - $at < 1 << 20 ? $hi - $at : 1 << 20;
            my $buf;
            if (!sysseek($mem, $at, 0)
                || !defined sysread($mem, $buf, $len))
            {
                $tail = '';
                next;
            }
            # across chunk boundaries: keep the last bytes of the last one
            my $s = $tail . $buf;
            $n++ while $s =~ /\Q$needle\E/g;
            $tail = substr($s, -(length($needle) - 1));
            $n -= () = $tail =~ /\Q$needle\E/g;     # never counted twice
        }
    }
    return $n;
}

# --- waiting -------------------------------------------------------------

# wait_for(sub { ... }, timeout => 10, what => 'text'): call the sub every
# 20 ms until it returns true or the deadline passes.  Returns its last
# value (true) or 0; with `what`, says what timed out.
sub wait_for {
    shift if blessed($_[0]) && $_[0]->isa(__PACKAGE__);
    my ($cond, %o) = @_;
    my $timeout = $o{timeout} // 10;
    my $err;
    # a condition that dies is not met yet (a table not replicated yet, a
    # server still starting): asked again, and its last error told if it
    # never is
    my $v = poll_until($timeout, sub {
        my $r = eval { $cond->() };
        $err = $@ if $@;
        return $r;
    });
    return $v if $v;
    Test::More::diag("timed out after $timeout s waiting for $o{what}"
                     . (defined $err ? " (last error: $err)" : ''))
        if defined $o{what} || defined $err;
    return 0;
}


# --- the end of a test ---------------------------------------------------

# What the logs say went wrong: alert and crit lines (less the allowed
# ones), sanitizer reports.
sub _log_problems {
    my ($self) = @_;
    my @p;
    for my $line ($self->grep_log(qr/\[(?:alert|crit)\]/)) {
        next if grep { $line =~ $_ } @{ $self->{allow} };
        push @p, "error.log: $line";
    }
    for my $f (qw(stderr.log error.log)) {
        push @p, map { "$f: $_" } $self->grep_log($SANITIZER, file => $f);
    }
    splice @p, 20, @p - 20, '...' if @p > 21;
    return @p;
}

# Stop sluice (after closing the test's connections, so a graceful QUIT
# has nothing to wait for) and check the logs.  One `not ok` if anything
# is wrong; an `ok` only if $t->plan counted it.
sub _finish {
    my ($self) = @_;
    return if $self->{finished}++ || $self->{owner} != $$;
    local ($?, $!, $@);
    eval { $_->disconnect } for grep { defined } @{ $self->{dbhs} };
    $self->stop(final => 1) if $self->{pid};
    my @p = (@{ $self->{problems} }, $self->_log_problems);
    my $name = "$self->{name}: no alert, crit or sanitizer report";
    if (@p) {
        Test::More::ok(0, $name);
        Test::More::diag("  $_") for @p;
        Test::More::diag("  test dir: $self->{dir}");
    } elsif ($self->{planned}) {
        Test::More::ok(1, $name);
    }
}

sub DESTROY {
    my ($self) = @_;
    $self->_finish unless ${^GLOBAL_PHASE} eq 'DESTRUCT';
}

END { _end() if $$ == $OWNER }

# SLUICE_TEST_ERRLOG: the end of sluice's logs, for each test directory
# where sluice ran, when the file failed (CI keeps no test directory).
sub _diag_logs {
    for my $dir (grep { -e "$_/error.log" || -e "$_/stderr.log" } @DIRS) {
        Test::More::diag("SLUICE_TEST_ERRLOG: sluice's logs in $dir\n"
            . _logs_tail($dir, ERRLOG_LINES, ERRLOG_BYTES)
            . "--- end of sluice's logs in $dir");
    }
}

sub _end {
    my $status = $?;
    local ($?, $!, $@);
    eval { $_->_finish } for grep { defined } @OBJECTS;
    my $failed = $status != 0 || !Test::More->builder->is_passing;
    my $keep = $ENV{SLUICE_TEST_KEEP} || $failed;
    for my $p (@PRIVATE) {
        eval { $p->{sandbox}->stop(keep => $keep) };
        Test::More::diag("stopping the sandbox: $@") if $@;
        $GUARDIAN->forget_sandbox($p->{sandbox}->dir);
        # its ports were claimed like test ports
        push @CLAIMS, map { _reserve_dir() . "/$_" } grep { defined }
            map { $p->{sandbox}->port($_) } qw(primary replica redis);
    }
    unlink @CLAIMS;
    rmdir _reserve_dir();       # if it is empty
    _diag_logs() if $failed && $ENV{SLUICE_TEST_ERRLOG};
    for my $dir (@DIRS, map { $_->{dir} } @PRIVATE) {
        if ($keep) {
            Test::More::diag("kept $dir");
        } else {
            remove_tree($dir);
        }
    }
}

1;

__END__

=head1 NAME

Sluice::Test - harness for sluice integration tests (t/*.t)

=head1 SYNOPSIS

    use strict;
    use warnings;
    use FindBin;
    use lib "$FindBin::Bin/lib";
    use Test::More;
    use Sluice::Test;           # exports wait_for

    my $t = Sluice::Test->new;
    $t->has('readconn');        # else the file skips

    $t->write_file_expand('sluice.conf', <<'EOF');
    worker_processes 1;
    events { worker_connections 1000; }
    mysql {
        user app { password "secret"; }
        upstream cluster {
            server %%PRIMARY%% role=primary;
            server %%REPLICA%% role=replica;
        }
        server {
            listen 127.0.0.1:%%PORT_0%%;
            router readconn;
            readconn_role primary;
            upstream cluster;
        }
    }
    EOF
    $t->run;
    $t->plan(2);                # 2 tests + the final clean-exit check

    my $dbh = $t->dbh;          # app/secret to port 0, database test
    is($dbh->selectrow_array('SELECT @@server_id'), 1, 'primary');
    ok($t->reload, 'reload');

=head1 DESCRIPTION

=head2 Test directory and config

C<< Sluice::Test->new(globals => 1, conf => 'sluice.conf') >> makes a
directory (under $TMPDIR, else t/tmp) removed at the end unless the test
failed or SLUICE_TEST_KEEP=1.  C<< $t->write_file_expand(NAME, TEXT) >>
writes TEXT with placeholders replaced: C<%%PRIMARY%%>, C<%%REPLICA%%>,
C<%%REDIS%%> (127.0.0.1:port), C<%%PRIMARY_PORT%%>, C<%%REPLICA_PORT%%>,
C<%%REDIS_PORT%%>, C<%%PRIMARY_SOCKET%%>, C<%%REPLICA_SOCKET%%>,
C<%%REDIS_SOCKET%%>, C<%%PORT_0%%>..C<%%PORT_9%%> (or any N; same as
C<< $t->port(N) >>), C<%%TESTDIR%%>, C<%%TEST_GLOBALS%%>.  An unknown
placeholder dies.

The config file (sluice.conf) gets the test globals
C<daemon off; pid TESTDIR/sluice.pid; error_log TESTDIR/error.log debug;>
in front, unless C<globals =E<gt> 0> was given to new, or the text says
where with C<%%TEST_GLOBALS%%>.  C<write_file> writes as is;
C<read_file>, C<testdir>, C<name> (the test file name as an identifier:
use it in table names, test files run in parallel).

=head2 sluice

C<< $t->run(conf => NAME, args => [...], env => {...}, timeout => 10,
may_fail => 1) >> starts C<objs/sluice -p TESTDIR/ -c TESTDIR/sluice.conf>
(SLUICE_BINARY overrides), output to TESTDIR/stderr.log, and waits until
every C<listen> address of the config is listening (unix: the socket
exists) and C<worker_processes N> workers run.  Dies if not, with the
logs; with may_fail returns undef and C<< $t->run_error >> says why.

C<< $t->stop(timeout => 10) >>: SIGQUIT, SIGTERM after the deadline, then
SIGKILL; waits for the master and its workers.
C<< $t->signal('HUP') >>, C<< $t->master_pid >>, C<< $t->worker_pids >>
(children of the master titled C<sluice: worker process>; a count in
scalar context), C<< $t->reload(timeout => 10) >> (HUP, then true once a
new worker runs), C<< $t->kill_worker(pid => P, signal => 'KILL',
wait => 1) >> (returns the pid; alerts naming it are allowed),
C<< $t->rss_kb(PID) >>, C<< $t->exit_status >> (wait status of the last
stop).

C<< my ($rc, $out) = $t->test_config(conf => NAME) >> runs C<sluice -t>.
C<< $t->has('cache', 'readconn') >> returns true if all these modules
are compiled in, and otherwise skips the whole file
(C<plan skip_all =E<gt> "no MODULE module">, naming the first one
missing): call it before the plan.  It is for modules only: a missing
tool or client library is for C<need> and C<have> (below), which fail.
C<< $t->has_module('readconn') >> asks without skipping; both read the
C<modules:> line of C<sluice -V>, and C<< $t->modules >> lists them.

=head2 Clients

C<< $t->dbh(port => N, user => 'app', password => 'secret',
database => 'test', socket => PATH, %attr) >>: DBD::MariaDB to
127.0.0.1:N (default C<< $t->port(0) >>), RaiseError and PrintError off,
5 s connect and 30 s read/write timeouts; undef and C<$DBI::errstr> on
failure.  C<< $t->primary_dbh >>, C<< $t->replica_dbh >>: root over the
servers' unix sockets, database test, RaiseError on.
C<< my $hash = $t->server_user(NAME, PASSWORD) >>: an account on the
primary that may only read the test database (made afresh; returns its
"*HEX" hash for C<password_hash>).
C<< my ($rc, $out, $err) = $t->mysql_cli(port => N, sql => '...',
user, password, database, args => [...], stdin => TEXT) >>: the mariadb
client, C<-N -B> over TCP.  C<primary_port>, C<replica_port>,
C<redis_port>, C<primary_socket>, C<replica_socket>, C<redis_socket>,
C<primary>, C<replica>, C<redis> (host:port).
C<< my ($rc, $out, $err) = $t->run_client(cmd => [...], timeout => S,
env => {...}, chdir => DIR, stdin => TEXT) >>: any client program (the
ones in t/clients/), killed after S seconds (default 30; C<$rc> -1).
C<< $t->need($ok, 'no php') >>: the file fails unless C<$ok> (a tool
contrib/deps.sh installs is missing), or skips when
C<SLUICE_TEST_ALLOW_SKIP> is set; C<< $t->have($ok, $why) >> the same
for a SKIP block (false: skip it).  C<< my ($pid, $rid) =
$t->run_rwsplit(plan => N, users => {...}) >>: one readwritesplit server
on PORT_0, started, and the two servers' C<@@server_id>.

=head2 Waiting and logs

C<wait_for(sub { ... }, timeout => 10, what => 'text')> polls every
20 ms; returns the sub's true value, or 0 at the deadline (with a diag if
C<what> is given).  C<< $t->error_log >>, C<< $t->grep_log(qr/.../,
file => 'error.log') >> (lines; a count in scalar context),
C<< $t->allow_log(qr/.../) >>.

=head2 The final check

At the end of the file (or at C<< $t->done_testing >>) the test's
database handles are closed, sluice is stopped, and one C<not ok> is
added if error.log has C<[alert]> or C<[crit]> lines not allowed, if
error.log or stderr.log (or C<sluice -t> output) has a sanitizer report,
if sluice died on a signal nobody sent, or if it did not exit on SIGQUIT.
C<< $t->plan(N) >> counts that check as test N+1; with done_testing it
shows only when it fails.  Close raw sockets to sluice before the end:
a graceful stop may wait for them.

When the file failed, its test directories are kept (named by a diag),
and with C<SLUICE_TEST_ERRLOG=1> the end of sluice's stderr.log and
error.log in each (the last 200 lines of each, 64 KiB at most) is
printed with diag, under a header naming the directory: for a run
whose directories are gone by the time anyone looks, as in CI.

=head2 Sandbox

The primary/replica (and redis) come from SLUICE_SANDBOX and the
SLUICE_*_PORT/SOCKET variables (t/run-tests: one sandbox for the run) or
are started privately on first use, in a directory of their own, and
stopped at the end.  Accounts: app/secret (ALL), monitor/monitor,
repl/repl, root without password over the sockets.  A guardian process
(L<Sluice::Guardian>) stops what a test started if the test is killed
outright.

=cut
