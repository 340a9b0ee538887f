package Sluice::Sandbox;

# A throwaway MariaDB primary and replica with real replication, and on
# request a redis-server, all on loopback under one directory.  Used by
# Sluice::Test and by contrib/sandbox/sluice-sandbox.
#
# Everything lives under DIR and is created here; stop() removes exactly
# that and nothing else:
#
#   DIR/.sluice-sandbox   marker: this directory holds a sandbox of ours
#   DIR/env.sh            the export lines; also how a later process finds
#                         the ports again
#   DIR/primary/          data/, tmp/, mysqld.sock, mysqld.pid, error.log
#   DIR/replica/          the same
#   DIR/redis/            redis.sock, redis.pid, redis.log
#   DIR/ports/            one empty file per port claimed by a test file
#                         (see free_port), so parallel tests never collide
#
# Errors die with a message that says what to look at.  Waits poll with a
# deadline; nothing here sleeps and hopes.

use strict;
use warnings;

use Carp qw(croak);
use Cwd qw(abs_path);
use DBI;
use Errno qw(EEXIST ENOENT);
use Exporter qw(import);
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);
use File::Path qw(make_path remove_tree);
use File::Spec;
use IO::Socket::UNIX;
use POSIX qw(WNOHANG);
use Socket qw(PF_INET SOCK_STREAM INADDR_LOOPBACK pack_sockaddr_in
              unpack_sockaddr_in);
use Time::HiRes qw(time sleep);

our @EXPORT_OK = qw(free_port spawn run_cmd pid_alive wait_exit exit_status
                    proc_cmdline proc_starttime poll_until slurp tail_file
                    find_bin);

# Accounts created on the primary; the replica gets them by replication.
our %USERS = (
    app     => 'secret',
    repl    => 'repl',
    monitor => 'monitor',
);

use constant {
    POLL          => 0.02,   # seconds between two looks at a condition
    START_TIMEOUT => 60,     # mariadb-install-db, mariadbd, redis start
    REPL_TIMEOUT  => 30,     # replica catches up with the primary
    STOP_TIMEOUT  => 30,     # clean shutdown before SIGKILL
};

my @ROLES = qw(primary replica);

# Options that keep a test server small and quick to start and stop.
# Durability is not wanted here: a crashed sandbox is thrown away.
my @MARIADBD_COMMON = (
    '--skip-name-resolve',
    '--bind-address=127.0.0.1',
    '--innodb-buffer-pool-size=64M',
    '--innodb-log-file-size=8M',
    '--innodb-flush-log-at-trx-commit=0',
    '--innodb-doublewrite=0',
    '--innodb-buffer-pool-load-at-startup=0',
    '--innodb-buffer-pool-dump-at-shutdown=0',
    '--performance-schema=0',
    '--max-connections=500',
    '--max-allowed-packet=64M',
);


# --- process helpers (also used by Sluice::Test) -------------------------

my %TAKEN;      # ports this process has handed out
my %REAPED;     # pid => wait status, for children reaped by pid_alive

# Run a poll loop: call $cond every POLL seconds until it returns true or
# $timeout seconds have passed.  Returns the last value of $cond.
sub poll_until {
    my ($timeout, $cond) = @_;
    my $deadline = time + $timeout;
    while (1) {
        my $v = $cond->();
        return $v if $v;
        return $v if time >= $deadline;
        sleep POLL;
    }
}

# A loopback TCP port that nothing uses: the kernel picks it for a bind to
# port 0.  The port is free once the probe socket is closed, so two callers
# could get the same one; this process never hands out a port twice, and
# with reserve_dir => DIR a claim file DIR/PORT (created with O_EXCL) makes
# that true across processes too.
sub free_port {
    my (%o) = @_;
    for (1 .. 1000) {
        CORE::socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n";
        bind($s, pack_sockaddr_in(0, INADDR_LOOPBACK))
            or die "bind 127.0.0.1:0: $!\n";
        my ($port) = unpack_sockaddr_in(getsockname($s));
        close $s;
        next if $TAKEN{$port};
        if ($o{reserve_dir}) {
            # the directory may come and go: whoever frees the last
            # claim removes it
            my $claim = "$o{reserve_dir}/$port";
            my $ok;
            for (1 .. 10) {
                make_path($o{reserve_dir});
                $ok = sysopen(my $fh, $claim, O_WRONLY | O_CREAT | O_EXCL);
                last if $ok || $! != ENOENT;
            }
            if (!$ok) {
                next if $! == EEXIST;
                die "$claim: $!\n";
            }
        }
        $TAKEN{$port} = 1;
        return $port;
    }
    die "no free loopback port found\n";
}

# fork and exec @$cmd in a new session (so that a ^C meant for the test
# does not reach it; same_session => 1 to stay), stdin from $o{stdin} or
# /dev/null, stdout appended to $o{stdout} or $o{log} or /dev/null, stderr
# to $o{stderr} or along with stdout, no file descriptor above 2 inherited.
# $o{env} adds environment variables.  Returns the pid; the caller reaps.
sub spawn {
    my (%o) = @_;
    my @cmd = @{ $o{cmd} };
    my $out = $o{stdout} // $o{log} // '/dev/null';
    my $in = $o{stdin} // '/dev/null';

    # buffered output would be written twice, once by the child
    $_->flush for *STDOUT{IO}, *STDERR{IO};

    my $pid = fork;
    die "fork: $!\n" unless defined $pid;
    return $pid if $pid;

    eval {
        POSIX::setsid() unless $o{same_session};
        open STDIN, '<', $in or die "$in: $!\n";
        open STDOUT, '>>', $out or die "$out: $!\n";
        if (defined $o{stderr}) {
            open STDERR, '>>', $o{stderr} or die "$o{stderr}: $!\n";
        } else {
            open STDERR, '>&', \*STDOUT or die "dup: $!\n";
        }
        _close_fds_above_2();
        @ENV{ keys %{ $o{env} } } = values %{ $o{env} } if $o{env};
        chdir $o{chdir} or die "$o{chdir}: $!\n" if $o{chdir};
        exec { $cmd[0] } @cmd or die "exec $cmd[0]: $!\n";
    };
    print STDERR $@;
    POSIX::_exit(127);
}

sub _close_fds_above_2 {
    opendir(my $d, '/proc/self/fd') or return;
    my @fds = grep { /^\d+$/ && $_ > 2 } readdir $d;
    closedir $d;
    POSIX::close($_) for @fds;
}

# Run a command to completion (spawn + wait), killing it after $o{timeout}
# seconds.  Returns its exit code, or -1 if it had to be killed.
sub run_cmd {
    my (%o) = @_;
    my $pid = spawn(%o, same_session => 1);
    if (!wait_exit($pid, $o{timeout} // 60)) {
        kill 'KILL', $pid;
        wait_exit($pid, 5);
        return -1;
    }
    my $st = exit_status($pid);
    return $st & 127 ? 128 + ($st & 127) : $st >> 8;
}

# True while $pid runs.  Reaps it if it is our child (its wait status is
# kept for exit_status); a zombie that some other parent has not reaped
# yet counts as gone.
sub pid_alive {
    my ($pid) = @_;
    return 0 unless $pid && $pid > 1;
    return 0 if exists $REAPED{$pid};
    local $?;
    my $r = waitpid($pid, WNOHANG);
    if ($r == $pid) {
        $REAPED{$pid} = $?;
        return 0;
    }
    return 1 if $r == 0;
    return 0 unless kill 0, $pid;
    my $stat = slurp("/proc/$pid/stat") // return 0;
    return $stat !~ /\)\s+[ZX]\s/;
}

# Wait status of a child reaped by pid_alive/wait_exit, or undef.  The
# record is kept, so a later process with the same pid is not confused
# with it only as long as nobody forgets the pid: call it once and drop it.
sub exit_status {
    my ($pid) = @_;
    return delete $REAPED{$pid};
}

sub wait_exit {
    my ($pid, $timeout) = @_;
    return poll_until($timeout, sub { !pid_alive($pid) });
}

sub proc_cmdline {
    my ($pid) = @_;
    my $c = slurp("/proc/$pid/cmdline") // return undef;
    $c =~ tr/\0/ /;
    $c =~ s/\s+\z//;
    return $c;
}

# Start time of $pid in clock ticks since boot: with the pid, it names a
# process for good (a pid alone may be reused).
sub proc_starttime {
    my ($pid) = @_;
    my $stat = slurp("/proc/$pid/stat") // return undef;
    $stat =~ s/^.*\)\s+//s;
    return (split ' ', $stat)[19];
}

# The content of $file, or undef if it cannot be read.  With $max: its
# last $max bytes at most, less the line the cut falls in (a debug log
# may be large, and only its end is wanted).
sub slurp {
    my ($file, $max) = @_;
    open(my $fh, '<', $file) or return undef;
    my $cut = defined $max ? (-s $fh // 0) - $max : 0;
    if ($cut > 0) {
        seek($fh, $cut, 0) or return undef;
    }
    local $/;
    my $c = <$fh> // '';
    $c =~ s/\A[^\n]*\n// if $cut > 0;
    return $c;
}

# The error and warning lines of a MariaDB log, or its tail.
sub _errors {
    my ($file) = @_;
    my @l = grep { /\[(?:ERROR|Warning)\]|^ERROR/ }
        split /\n/, slurp($file) // '';
    return tail_file($file, 20) unless @l;
    splice @l, 0, @l - 20 if @l > 20;
    return join '', map { "    $_\n" } @l;
}

# The last $n lines of $file, indented; of its last $max bytes if given.
sub tail_file {
    my ($file, $n, $max) = @_;
    my $c = slurp($file, $max) // return "($file: not found)\n";
    my @l = split /\n/, $c;
    splice @l, 0, @l - $n if @l > $n;
    return join '', map { "    $_\n" } @l;
}

# A program from PATH, or from the sbin directories a non-root PATH lacks.
sub find_bin {
    my (@names) = @_;
    my @dirs = (File::Spec->path, qw(/usr/sbin /usr/local/sbin /sbin));
    for my $n (@names) {
        for my $d (@dirs) {
            return "$d/$n" if -x "$d/$n" && !-d _;
        }
    }
    die "none of @names found in PATH or sbin\n";
}


# --- the sandbox object --------------------------------------------------

# new(dir => DIR): a sandbox in DIR, started or not.  Nothing is touched
# until start(), stop() or load().  reserve_dir => RDIR: claim the ports
# there (see free_port).  mariadbd_args => [...]: more mariadbd options
# for both servers, after the usual ones so that they win (the bench asks
# for --max-connections=12000 --thread-handling=pool-of-threads ...).
sub new {
    my ($class, %o) = @_;
    croak 'dir required' unless defined $o{dir};
    my $self = bless { pids => {}, ports => {}, sockets => {},
                       reserve_dir => $o{reserve_dir},
                       mariadbd_args => [ @{ $o{mariadbd_args} // [] } ],
                       replica_binlog => $o{replica_binlog},
                     }, $class;
    $self->{dir} = File::Spec->rel2abs($o{dir});
    $self->{dir} =~ s{/+\z}{};
    return $self;
}

# A sandbox somebody else started, described by the SLUICE_* variables
# (as exported by sluice-sandbox).  Returns undef unless they are all set.
# Such a sandbox is only used: stop() refuses it.
sub from_env {
    my ($class, $env) = @_;
    $env //= \%ENV;
    my @need = qw(SLUICE_SANDBOX SLUICE_PRIMARY_PORT SLUICE_PRIMARY_SOCKET
                  SLUICE_REPLICA_PORT SLUICE_REPLICA_SOCKET);
    return undef if grep { !defined $env->{$_} || $env->{$_} eq '' } @need;
    my $self = $class->new(dir => $env->{SLUICE_SANDBOX});
    $self->{attached} = 1;
    $self->_set_from_env($env);
    return $self;
}

sub _set_from_env {
    my ($self, $env) = @_;
    for my $r (@ROLES, 'redis') {
        my $u = uc $r;
        $self->{ports}{$r} = $env->{"SLUICE_${u}_PORT"}
            if $env->{"SLUICE_${u}_PORT"};
        $self->{sockets}{$r} = $env->{"SLUICE_${u}_SOCKET"}
            if $env->{"SLUICE_${u}_SOCKET"};
    }
}

sub dir      { $_[0]{dir} }
sub attached { $_[0]{attached} }
sub port     { $_[0]{ports}{ $_[1] } }

sub socket {
    my ($self, $role) = @_;
    return $self->{sockets}{$role}
        // ($role eq 'redis' ? "$self->{dir}/redis/redis.sock"
                             : "$self->{dir}/$role/mysqld.sock");
}

sub has_redis   { defined $_[0]{ports}{redis} }
sub has_mariadb { defined $_[0]{ports}{primary} }
sub start_time  { $_[0]{start_time} }

sub _pidfile {
    my ($self, $role) = @_;
    return $role eq 'redis' ? "$self->{dir}/redis/redis.pid"
                            : "$self->{dir}/$role/mysqld.pid";
}

# The environment that describes this sandbox, as name => value.
sub env {
    my ($self) = @_;
    my %e = (SLUICE_SANDBOX => $self->{dir});
    for my $r (@ROLES, 'redis') {
        next unless defined $self->{ports}{$r};
        $e{ 'SLUICE_' . uc($r) . '_PORT' }   = $self->{ports}{$r};
        $e{ 'SLUICE_' . uc($r) . '_SOCKET' } = $self->socket($r);
    }
    return %e;
}

sub env_lines {
    my ($self) = @_;
    my %e = $self->env;
    my @order = grep { exists $e{$_} } qw(SLUICE_SANDBOX
        SLUICE_PRIMARY_PORT SLUICE_PRIMARY_SOCKET
        SLUICE_REPLICA_PORT SLUICE_REPLICA_SOCKET
        SLUICE_REDIS_PORT SLUICE_REDIS_SOCKET);
    return join '', map { "export $_=" . _shquote($e{$_}) . "\n" } @order;
}

sub _shquote {
    my ($v) = @_;
    $v =~ s/'/'\\''/g;
    return "'$v'";
}

sub write_env {
    my ($self) = @_;
    my $f = "$self->{dir}/env.sh";
    open(my $fh, '>', "$f.new") or die "$f.new: $!\n";
    print $fh $self->env_lines;
    close $fh or die "$f.new: $!\n";
    rename "$f.new", $f or die "$f: $!\n";
}

# Read DIR/env.sh back.  Returns false if there is none.
sub load {
    my ($self) = @_;
    my $c = slurp("$self->{dir}/env.sh") // return 0;
    my %e;
    while ($c =~ /^export (\w+)='((?:[^']|'\\'')*)'$/mg) {
        (my $v = $2) =~ s/'\\''/'/g;
        $e{$1} = $v;
    }
    $self->_set_from_env(\%e);
    return 1;
}

# Each component this directory has or had: role => { pid, running }.
sub status {
    my ($self) = @_;
    my %st;
    return \%st unless -e $self->_marker;
    for my $r (@ROLES, 'redis') {
        next unless -d "$self->{dir}/$r";
        my $pid = $self->_running_pid($r);
        $st{$r} = { pid => $pid, running => $pid ? 1 : 0,
                    port => $self->{ports}{$r}, socket => $self->socket($r) };
    }
    return \%st;
}

# True if every component the sandbox has is running (and it has some).
sub running {
    my ($self) = @_;
    my $st = $self->status;
    return %$st && !grep { !$_->{running} } values %$st;
}

# The pid of the server of $role if it runs, from what we spawned or from
# its pid file; the command line is checked so that a reused pid is never
# taken for ours.
sub _running_pid {
    my ($self, $role) = @_;
    my $pid = $self->{pids}{$role};
    if (!$pid) {
        ($pid) = (slurp($self->_pidfile($role)) // '') =~ /(\d+)/;
    }
    return undef unless $pid && pid_alive($pid);
    my $cmd = proc_cmdline($pid) // '';
    my $re = $role eq 'redis' ? qr/redis-server/ : qr/mariadbd|mysqld/;
    return $cmd =~ $re ? $pid : undef;
}


# --- start ---------------------------------------------------------------

# start(redis => 0|1, mariadb => 0|1): start the sandbox; mariadb defaults
# to on.  Dies if something fails, after stopping what it had started
# (its logs are kept for a look).
sub start {
    my ($self, %o) = @_;
    croak 'cannot start an attached sandbox' if $self->{attached};
    my $mariadb = $o{mariadb} // 1;
    my $t0 = $self->{t0} = time;

    $self->_prepare_dir;
    my $ok = eval {
        # redis is independent and quick: let it start meanwhile
        $self->_spawn_redis if $o{redis};
        if ($mariadb) {
            $self->{ports}{$_} = free_port(reserve_dir => $self->{reserve_dir})
                for @ROLES;
            $self->_install_db('primary');
            $self->_phase('install-db');
            $self->_copy_datadir('primary', 'replica');
            $self->_spawn_mariadbd($_) for @ROLES;
            $self->_wait_mariadbd(@ROLES);
            $self->_phase('mariadbd up');
            $self->_setup_primary;
            $self->_setup_replica;
            $self->_wait_replication;
            $self->_phase('replicating');
        }
        $self->_wait_redis if $o{redis};
        $self->write_env;
        $self->_phase('done');
        1;
    };
    if (!$ok) {
        my $err = $@;
        eval { $self->stop(keep => 1) };
        die "sandbox in $self->{dir} did not start: $err";
    }
    $self->{start_time} = time - $t0;
    return $self;
}

# With SLUICE_SANDBOX_VERBOSE=1, say how long start() took to get where.
sub _phase {
    my ($self, $what) = @_;
    printf STDERR "sluice-sandbox: %5.2f s %s\n", time - $self->{t0}, $what
        if $ENV{SLUICE_SANDBOX_VERBOSE};
}

# Add a redis-server to a sandbox (started or not).
sub start_redis {
    my ($self) = @_;
    croak 'cannot start an attached sandbox' if $self->{attached};
    return $self if $self->_running_pid('redis');
    $self->_prepare_dir;
    my $ok = eval {
        $self->_spawn_redis;
        $self->_wait_redis;
        $self->write_env;
        1;
    };
    if (!$ok) {
        my $err = $@;
        $self->_stop_role('redis');
        die "redis in $self->{dir} did not start: $err";
    }
    return $self;
}

sub _marker { "$_[0]{dir}/.sluice-sandbox" }

# Create DIR (noting whether we did, so that stop removes it only then)
# and refuse a directory holding things of ours we do not know about.
sub _prepare_dir {
    my ($self) = @_;
    my $dir = $self->{dir};
    if (-e $self->_marker) {
        return;
    }
    my $created = !-d $dir;
    make_path($dir) if $created;
    for my $sub (@ROLES, 'redis', 'ports', 'env.sh') {
        die "$dir/$sub exists and is not from sluice-sandbox\n"
            if -e "$dir/$sub";
    }
    open(my $fh, '>', $self->_marker) or die $self->_marker . ": $!\n";
    print $fh "created_dir=", ($created ? 1 : 0), "\n";
    close $fh;
    $self->{dir} = abs_path($dir);
}

sub _install_db {
    my ($self, $role) = @_;
    my $d = "$self->{dir}/$role";
    die "$d exists: stop the sandbox first\n" if -e $d;
    make_path($d);
    make_path("$d/tmp");
    my $rc = run_cmd(
        cmd => [ find_bin('mariadb-install-db', 'mysql_install_db'),
                 '--no-defaults', '--user=root',
                 '--auth-root-authentication-method=normal',
                 '--skip-test-db', '--skip-name-resolve',
                 # no resolveip check of the host name: a container or
                 # chroot may have neither it nor localhost in /etc/hosts
                 '--force',
                 "--datadir=$d/data", "--tmpdir=$d/tmp", @MARIADBD_COMMON ],
        log => "$d/install.log",
        timeout => START_TIMEOUT);
    die "mariadb-install-db failed ($rc), see $d/install.log:\n"
        . _errors("$d/install.log") if $rc != 0;
}

# The replica starts from a copy of the freshly installed primary: cheaper
# than a second bootstrap, and the same system tables either way.
sub _copy_datadir {
    my ($self, $from, $to) = @_;
    my ($src, $dst) = map { "$self->{dir}/$_" } $from, $to;
    die "$dst exists: stop the sandbox first\n" if -e $dst;
    make_path($dst, "$dst/tmp");
    my $rc = run_cmd(cmd => [ 'cp', '-a', "$src/data", "$dst/data" ],
                     log => "$dst/install.log", timeout => START_TIMEOUT);
    die "copying $src/data to $dst/data failed ($rc)\n" if $rc != 0;
}

sub _mariadbd_args {
    my ($self, $role) = @_;
    my $d = "$self->{dir}/$role";
    my @a = (
        '--no-defaults', '--user=root',
        "--datadir=$d/data", "--tmpdir=$d/tmp",
        '--socket=' . $self->socket($role),
        "--port=$self->{ports}{$role}",
        "--pid-file=$d/mysqld.pid",
        "--log-error=$d/error.log",
        @MARIADBD_COMMON,
        @{ $self->{mariadbd_args} },
    );
    if ($role eq 'primary') {
        push @a, '--server-id=1', "--log-bin=$d/data/mysql-bin",
                 '--binlog-format=ROW', '--sync-binlog=0',
                 '--gtid-strict-mode=1';
    } else {
        # replica_binlog: it writes what it applies to a binlog of its
        # own, with the primary's GTIDs, so that it can be promoted and
        # read from the same position
        push @a, '--server-id=2',
                 $self->{replica_binlog}
                 ? ("--log-bin=$d/data/mysql-bin", '--log-slave-updates=1',
                    '--binlog-format=ROW', '--gtid-strict-mode=1')
                 : ('--skip-log-bin', '--log-slave-updates=0'),
                 '--read-only=1',
                 '--skip-slave-start', "--relay-log=$d/data/relay-bin",
                 '--slave-net-timeout=10';
    }
    return @a;
}

sub _spawn_mariadbd {
    my ($self, $role) = @_;
    my $sock = $self->socket($role);
    # sun_path holds 108 bytes with the terminating NUL
    die "socket path $sock is too long: use a shorter directory\n"
        if length($sock) > 107;
    $self->{pids}{$role} = spawn(
        cmd => [ find_bin('mariadbd', 'mysqld'),
                 $self->_mariadbd_args($role) ],
        log => "$self->{dir}/$role/error.log");
}

sub _wait_mariadbd {
    my ($self, @roles) = @_;
    my %up;
    poll_until(START_TIMEOUT, sub {
        for my $r (grep { !$up{$_} } @roles) {
            my $pid = $self->{pids}{$r};
            die "mariadbd ($r) exited during startup, "
                . "see $self->{dir}/$r/error.log:\n"
                . _errors("$self->{dir}/$r/error.log")
                unless pid_alive($pid);
            next unless -S $self->socket($r);
            my $dbh = $self->admin_dbh($r, RaiseError => 0) or next;
            $self->{dbh}{$r} = $dbh;
            $up{$r} = 1;
        }
        return @roles == keys %up;
    });
    for my $r (grep { !$up{$_} } @roles) {
        die "mariadbd ($r) not ready after " . START_TIMEOUT . " s, "
            . "see $self->{dir}/$r/error.log:\n"
            . tail_file("$self->{dir}/$r/error.log", 20);
    }
}

# root over the unix socket, no password.  Extra arguments are DBI
# attributes; RaiseError is on unless overridden.
sub admin_dbh {
    my ($self, $role, %attr) = @_;
    return DBI->connect(
        'DBI:MariaDB:mariadb_socket=' . $self->socket($role), 'root', '',
        { RaiseError => 1, PrintError => 0, AutoCommit => 1,
          mariadb_connect_timeout => 5, %attr });
}

sub _setup_primary {
    my ($self) = @_;
    my $dbh = $self->{dbh}{primary};
    my @sql = ('CREATE DATABASE IF NOT EXISTS test');
    for my $host ('%', 'localhost') {
        # all but writing past read_only: a write sluice sends to the
        # replica by mistake must fail, not break replication
        push @sql,
            "CREATE USER 'app'\@'$host' IDENTIFIED BY '$USERS{app}'",
            "GRANT ALL ON *.* TO 'app'\@'$host'",
            "REVOKE READ_ONLY ADMIN ON *.* FROM 'app'\@'$host'";
    }
    push @sql,
        "CREATE USER 'repl'\@'%' IDENTIFIED BY '$USERS{repl}'",
        "GRANT REPLICATION SLAVE ON *.* TO 'repl'\@'%'",
        "CREATE USER 'monitor'\@'%' IDENTIFIED BY '$USERS{monitor}'",
        # SLAVE MONITOR: since 10.5.9 SHOW SLAVE STATUS needs it, and
        # REPLICATION CLIENT (now BINLOG MONITOR) no longer implies it;
        # SHOW VIEW and TRIGGER: the schema catalog sees every view and
        # trigger (without them it is blind)
        "GRANT REPLICATION CLIENT, PROCESS, SLAVE MONITOR, SHOW VIEW, "
            . "TRIGGER ON *.* TO 'monitor'\@'%'",
        # information_schema shows a view's definition only to an account
        # that may also SELECT from it: the views of `test` can be placed
        "GRANT SELECT ON test.* TO 'monitor'\@'%'";
    $dbh->do($_) for @sql;
}

sub _setup_replica {
    my ($self) = @_;
    my $dbh = $self->{dbh}{replica};
    $dbh->do("CHANGE MASTER TO MASTER_HOST='127.0.0.1', "
        . "MASTER_PORT=$self->{ports}{primary}, MASTER_USER='repl', "
        . "MASTER_PASSWORD='$USERS{repl}', MASTER_USE_GTID=slave_pos, "
        . "MASTER_CONNECT_RETRY=1");
    $dbh->do('START SLAVE');
}

# Both replication threads run, and the replica has applied everything
# the primary had written by now (users and database included).
sub _wait_replication {
    my ($self) = @_;
    my ($p, $r) = @{ $self->{dbh} }{qw(primary replica)};
    my $deadline = time + REPL_TIMEOUT;
    my $st;
    my $running = poll_until(REPL_TIMEOUT, sub {
        $st = $r->selectrow_hashref('SHOW SLAVE STATUS') // {};
        return ($st->{Slave_IO_Running} // '') eq 'Yes'
            && ($st->{Slave_SQL_Running} // '') eq 'Yes';
    });
    my $pos = $p->selectrow_array('SELECT @@gtid_binlog_pos');
    my $left = int($deadline - time) + 1;
    my $w = $running
        && $r->selectrow_array('SELECT MASTER_GTID_WAIT(?, ?)', undef,
                               $pos, $left);
    if (!$running || !defined $w || $w != 0) {
        die "replica did not catch up with the primary (at $pos): "
            . "Slave_IO_Running=" . ($st->{Slave_IO_Running} // '?')
            . " Slave_SQL_Running=" . ($st->{Slave_SQL_Running} // '?')
            . " Last_IO_Error=" . ($st->{Last_IO_Error} // '')
            . " Last_SQL_Error=" . ($st->{Last_SQL_Error} // '') . "\n";
    }
    my $n = $r->selectrow_array(
        "SELECT COUNT(*) FROM mysql.user WHERE User = 'app'");
    my $db = $r->selectrow_array("SHOW DATABASES LIKE 'test'");
    die "replica caught up but lacks the app user or the test database\n"
        unless $n == 2 && $db;
}

sub _spawn_redis {
    my ($self) = @_;
    my $d = "$self->{dir}/redis";
    make_path($d);
    my $port = $self->{ports}{redis}
        = free_port(reserve_dir => $self->{reserve_dir});
    $self->{pids}{redis} = spawn(
        cmd => [ find_bin('redis-server'),
                 '--port', $port, '--bind', '127.0.0.1',
                 '--unixsocket', $self->socket('redis'),
                 '--unixsocketperm', '700',
                 '--pidfile', "$d/redis.pid", '--logfile', "$d/redis.log",
                 '--dir', $d, '--daemonize', 'no',
                 '--save', '', '--appendonly', 'no' ],
        log => "$d/redis.log");
}

sub _redis_cmd {
    my ($self, $cmd) = @_;
    my $s = IO::Socket::UNIX->new(Peer => $self->socket('redis'))
        or return undef;
    print $s "$cmd\r\n";
    my $reply = <$s>;
    return $reply // '';        # SHUTDOWN closes without a reply
}

sub _wait_redis {
    my ($self) = @_;
    my $pid = $self->{pids}{redis};
    my $ok = poll_until(START_TIMEOUT, sub {
        die "redis-server exited during startup, see "
            . "$self->{dir}/redis/redis.log:\n"
            . tail_file("$self->{dir}/redis/redis.log", 20)
            unless pid_alive($pid);
        return -S $self->socket('redis')
            && ($self->_redis_cmd('PING') // '') =~ /^\+PONG/;
    });
    die "redis-server not ready after " . START_TIMEOUT . " s\n" unless $ok;
}


# --- stop ----------------------------------------------------------------

# Stop every server of the sandbox: all are asked at once (mariadb-admin
# shutdown, redis SHUTDOWN), then each gets STOP_TIMEOUT seconds before
# SIGKILL.  Unless keep => 1, then removes what start() created.  Returns
# true if every server stopped cleanly.
sub stop {
    my ($self, %o) = @_;
    croak 'refusing to stop an attached sandbox' if $self->{attached};
    return 1 unless -e $self->_marker;

    delete $self->{dbh};
    my (%pid, @helpers);
    for my $r (@ROLES) {
        my $pid = $self->_running_pid($r) or next;
        $pid{$r} = $pid;
        push @helpers, $self->_ask_mariadbd_to_stop($r, $pid);
    }
    if (my $pid = $self->_running_pid('redis')) {
        $pid{redis} = $pid;
        $self->_redis_cmd('SHUTDOWN NOSAVE') // kill 'TERM', $pid;
    }

    my $clean = 1;
    for my $r (sort keys %pid) {
        next if wait_exit($pid{$r}, STOP_TIMEOUT);
        warn "sluice-sandbox: $r (pid $pid{$r}) ignored shutdown, killing\n";
        kill 'KILL', $pid{$r};
        wait_exit($pid{$r}, 5);
        $clean = 0;
    }
    # mariadb-admin may still wait for the pid file to go
    for my $h (@helpers) {
        kill 'KILL', $h unless wait_exit($h, 2);
        wait_exit($h, 5);
        exit_status($h);
    }
    delete $self->{pids};
    $self->_remove unless $o{keep};
    return $clean;
}

# The clean way to stop mariadbd is a shutdown command over its socket;
# SIGTERM does the same when the socket is not there (still starting).
sub _ask_mariadbd_to_stop {
    my ($self, $role, $pid) = @_;
    my $sock = $self->socket($role);
    if (!-S $sock) {
        kill 'TERM', $pid;
        return ();
    }
    # --shutdown-timeout=0: return at once; we wait for the pid ourselves
    return spawn(
        cmd => [ find_bin('mariadb-admin', 'mysqladmin'), '--no-defaults',
                 '--user=root', '--protocol=socket', "--socket=$sock",
                 '--shutdown-timeout=0', 'shutdown' ],
        log => "$self->{dir}/$role/shutdown.log", same_session => 1);
}

# kill_server(ROLE): SIGKILL its mariadbd, as a crash would, and wait
# until it is gone.  start_server(ROLE): start it again on the same port
# and data, and wait until it answers.  For tests of a server dying under
# the proxy; a sandbox of their own, since others share the usual one.
sub kill_server {
    my ($self, $role) = @_;
    my $pid = $self->_running_pid($role) or return 0;
    delete $self->{dbh}{$role};
    kill 'KILL', $pid;
    return wait_exit($pid, STOP_TIMEOUT);
}

# A clean stop of one server (TERM, then KILL if it hangs).
sub stop_server {
    my ($self, $role) = @_;
    delete $self->{dbh}{$role};
    $self->_stop_role($role);
    return !$self->_running_pid($role);
}

sub start_server {
    my ($self, $role) = @_;
    $self->_spawn_mariadbd($role);
    $self->_wait_mariadbd($role);
    return $self;
}

sub _stop_role {
    my ($self, $role) = @_;
    my $pid = $self->_running_pid($role) or return;
    kill 'TERM', $pid;
    return if wait_exit($pid, STOP_TIMEOUT);
    kill 'KILL', $pid;
    wait_exit($pid, 5);
}

sub _remove {
    my ($self) = @_;
    my $dir = $self->{dir};
    my ($created) = (slurp($self->_marker) // '') =~ /created_dir=(\d)/;
    remove_tree("$dir/$_") for grep { -e "$dir/$_" } @ROLES, 'redis', 'ports';
    unlink "$dir/env.sh", "$dir/env.sh.new";
    unlink $self->_marker;
    rmdir $dir if $created;
}

1;

__END__

=head1 NAME

Sluice::Sandbox - MariaDB primary + replica (+ redis) for sluice tests

=head1 SYNOPSIS

    my $sb = Sluice::Sandbox->new(dir => '/tmp/sb')->start(redis => 1);
    my $port = $sb->port('primary');          # also 'replica', 'redis'
    my $sock = $sb->socket('replica');
    my $dbh  = $sb->admin_dbh('primary');     # root over the socket
    print $sb->env_lines;                     # export SLUICE_...=...
    $sb->stop;                                # or stop(keep => 1)

    my $shared = Sluice::Sandbox->from_env;   # undef unless SLUICE_* set

=head1 DESCRIPTION

The primary (server-id 1, binlog, GTID strict mode) and the replica
(server-id 2, read_only, no binlog, replicating with MASTER_USE_GTID =
slave_pos) listen on free 127.0.0.1 ports, each with its own unix socket.
On the primary: database C<test>; C<app>@C<%> and C<app>@C<localhost>
(password C<secret>, ALL on *.* but READ_ONLY ADMIN, so that it cannot
write on the replica); C<repl>@C<%> (C<repl>); C<monitor>@C<%>
(C<monitor>, REPLICATION CLIENT, PROCESS, SLAVE MONITOR, SHOW VIEW and
TRIGGER on *.* for the monitor and its schema catalog, and SELECT on
C<test>.*, without which information_schema hides the definitions of the
views there).  start() returns once the replica has applied all of that.

=cut
