package SluiceBench::Target;

# What the bench measures: a target is something sysbench can talk to
# (the primary itself, or a proxy forwarding to it) over TCP on loopback
# and, where it can, over a unix socket.  This file holds the list of
# targets and what all of them share; SluiceBench/Target/KIND.pm holds
# each kind.
#
# Adding a target is a line in @REGISTRY: a name, a kind, its options.
# A sluice target takes `server_conf` (the lines of its `server {}` block
# besides listen and upstream) and `module` (skipped with a note when
# objs/sluice lacks it), and `replica` (the upstream lists the sandbox's
# replica too), as the readwritesplit targets do.
#
# A kind implements start(%o), stop, endpoint($transport), cpu_pids,
# rss_pids, idle_capacity, version; see the methods below for the
# contracts.

use strict;
use warnings;

use Carp qw(croak);
use DBI;
use Time::HiRes qw(time sleep);

use File::Path qw(make_path);
use Sluice::Sandbox qw(free_port poll_until spawn pid_alive wait_exit
                       proc_starttime tail_file);
use SluiceBench::Util qw(guard unguard);

# The -other and -batch entries show what the scheduling policy alone is
# worth: sluice's workers are SCHED_BATCH unless told otherwise
# (worker_sched_policy), HAProxy runs SCHED_OTHER unless started under
# `chrt --batch 0`.  They are measured for the throughput table only
# (variant => 1: no idle-session memory test, not in --quick).
our @REGISTRY = (
    # name                 kind       options
    [ 'direct',             'Direct' ],
    [ 'sluice-1',           'Sluice',  workers => 1 ],
    [ 'sluice-auto',        'Sluice',  workers => 'auto' ],
    [ 'haproxy-1',          'HAProxy', nbthread => 1 ],
    [ 'haproxy-auto',       'HAProxy', nbthread => 'auto' ],
    [ 'rwsplit-1',          'Sluice',  workers => 1,
      module => 'readwritesplit', replica => 1,
      server_conf => 'router readwritesplit;',
      label => 'sluice readwritesplit, 1 worker' ],
    [ 'rwsplit-auto',       'Sluice',  workers => 'auto',
      module => 'readwritesplit', replica => 1,
      server_conf => 'router readwritesplit;',
      label => 'sluice readwritesplit, auto workers' ],
    [ 'sluice-1-other',     'Sluice',  workers => 1, sched => 'other',
      variant => 1 ],
    [ 'sluice-auto-other',  'Sluice',  workers => 'auto', sched => 'other',
      variant => 1 ],
    [ 'haproxy-1-batch',    'HAProxy', nbthread => 1, sched => 'batch',
      variant => 1 ],
    [ 'haproxy-auto-batch', 'HAProxy', nbthread => 'auto', sched => 'batch',
      variant => 1 ],
    # the query cache (`--cache`: their own workload, not in the default
    # run): readconn behind the cache filter, one zone of 64 MB
    [ 'cache-1',            'Sluice',  workers => 1, preset => 'cache',
      module => 'cache', cache => 1,
      mysql_conf => 'cache_zone bench size=64m;',
      upstream_conf => 'monitor_user monitor; monitor_password "monitor";',
      server_conf => "router readconn;\n        readconn_role primary;\n"
          . "        filters cache;\n        cache bench;\n"
          . "        cache_ttl 1h;",
      label => 'sluice readconn + cache, 1 worker' ],
    [ 'cache-auto',         'Sluice',  workers => 'auto', preset => 'cache',
      module => 'cache', cache => 1,
      mysql_conf => 'cache_zone bench size=64m;',
      upstream_conf => 'monitor_user monitor; monitor_password "monitor";',
      server_conf => "router readconn;\n        readconn_role primary;\n"
          . "        filters cache;\n        cache bench;\n"
          . "        cache_ttl 1h;",
      label => 'sluice readconn + cache, auto workers' ],
    # the Redis tier (`--redis`, issue 22): point selects served from the
    # zone with the tier configured, from Redis (strict: every hit is
    # Redis'; a 1 MB zone, too small for the 4000 rows: most hits are
    # Redis' and copied into the zone), and with Redis dead (a port
    # nothing listens on: the zone serves, nothing waits; this target
    # reads the binlog, its source of invalidations, as a host should
    # whose Redis may die: a host that takes them from Redis' pushes
    # trusts no zone hit while Redis is gone, and its server answers)
    _redis('zone-redis-1', 'bench size=64m', '',
           'sluice readconn + cache + cache_redis, 1 worker (zone hits)'),
    _redis('redis-strict-1', 'bench size=64m', 'strict on;',
           'sluice readconn + cache_redis strict, 1 worker (Redis hits)'),
    _redis('redis-small-1', 'bench size=1m', '',
           'sluice readconn + cache_redis, 1 worker, a 1 MB zone'),
    _redis('redis-dead-1', 'bench size=64m', 'dead',
           'sluice readconn + cache_redis, 1 worker, Redis dead'),
    # strict on a three-master Redis Cluster (contrib/bench/redis-cluster):
    # each hit a GET on the entry's master and an MGET on the
    # generations'
    _redis('redis-cluster-1', 'bench size=64m', 'cluster',
           'sluice readconn + cache_redis strict on a 3-master Redis '
           . 'Cluster, 1 worker'),
    # the host's floor under a hit: a server that only reads the query
    # and sends an answer from memory (contrib/bench/nullserver.c)
    [ 'null-1',             'Null',    threads => 1, preset => 'cache',
      variant => 1 ],
    [ 'null-auto',          'Null',    threads => 'auto', preset => 'cache',
      variant => 1 ],
    # what causal_reads costs (`--causal`): readwritesplit, 2 workers, a
    # monitor (its gtid_current_pos tells what the replica has applied)
    _causal('off'),
    _causal('local'),
    _causal('local', '100ms'),
    _causal('local', '1s'),
    _causal('global'),
    _causal('global', '100ms'),
    _causal('global', '1s'),
);

# A registry entry of --redis: the zone, the redis block's extra line
# ("dead": a port nothing listens on; "cluster": strict on the bench's
# cluster).  %%REDIS%% is the sandbox's redis-server, %%REDISCL%% a seed
# of the cluster (SluiceBench::Target::Sluice).
sub _redis {
    my ($name, $zone, $extra, $label) = @_;
    my $dead = $extra eq 'dead';
    my $server = $dead ? '127.0.0.1:1'
               : $extra eq 'cluster' ? '127.0.0.1:%%REDISCL%%'
               : '127.0.0.1:%%REDIS%%';
    $extra = $extra eq 'dead' ? ''
           : $extra eq 'cluster' ? 'cluster on; strict on;' : $extra;
    return [ $name, 'Sluice', workers => 1, preset => 'redis',
        module => 'cache_redis', cache => 1, redis => 1,
        mysql_conf => "cache_zone $zone;\n    redis shared { server "
            . "$server; prefix \"bench:\"; $extra }",
        upstream_conf => 'monitor_user monitor; monitor_password "monitor";'
            . ($dead ? ' binlog on; binlog_user repl; binlog_password '
                       . '"repl";' : ''),
        server_conf => "router readconn;\n        readconn_role primary;\n"
            . "        filters cache;\n        cache bench;\n"
            . "        cache_ttl 1h;\n        cache_redis shared;",
        label => $label ];
}

# A registry entry of --causal: causal_reads MODE, causal_reads_timeout
# TIMEOUT if given.
sub _causal {
    my ($mode, $timeout) = @_;
    my $conf = "router readwritesplit;\n        causal_reads $mode;";
    $conf .= "\n        causal_reads_timeout $timeout;" if $timeout;
    return [ 'causal-' . $mode . ($timeout ? "-$timeout" : ''), 'Sluice',
        workers => 2, preset => 'causal', module => 'readwritesplit',
        replica => 1, causal => 1,
        upstream_conf => 'monitor_user monitor; monitor_password "monitor";',
        server_conf => $conf,
        setting => $mode . ($timeout ? ", timeout $timeout" : ''),
        label => "readwritesplit, 2 workers, causal_reads $mode"
            . ($timeout ? ", causal_reads_timeout $timeout" : '') ];
}

sub names { map { $_->[0] } @REGISTRY }

sub _opts { +{ @{ $_[0] }[2 .. $#{ $_[0] }] } }

# The targets of a run without --targets: all but those of a preset.
sub default_names { map { $_->[0] } grep { !_opts($_)->{preset} }
                    @REGISTRY }

# The targets of --quick: all but the variants and presets.
sub main_names { map { $_->[0] }
                 grep { !_opts($_)->{variant} && !_opts($_)->{preset} }
                 @REGISTRY }

# The targets of a preset (--cache).
sub preset_names {
    my ($class, $preset) = @_;
    return map { $_->[0] } grep { (_opts($_)->{preset} // '') eq $preset }
           @REGISTRY;
}

sub is_variant { $_[0]{variant} ? 1 : 0 }

# SluiceBench::Target->create(NAME, CTX): a target object, not started.
# CTX is the bench context (workdir, primary, nproc, nofile, user, ...).
sub create {
    my ($class, $name, $ctx) = @_;
    my ($entry) = grep { $_->[0] eq $name } @REGISTRY
        or croak "unknown target \"$name\"";
    my ($n, $kind, %opts) = @$entry;
    my $pkg = "SluiceBench::Target::$kind";
    eval "require $pkg; 1" or die $@;
    return $pkg->new(name => $n, ctx => $ctx, %opts);
}

sub new {
    my ($class, %o) = @_;
    return bless { problems => [], notes => [], %o }, $class;
}

sub name      { $_[0]{name} }
sub kind      { (split /::/, ref $_[0])[-1] }
sub is_proxy  { 1 }
sub transports { qw(tcp unix) }
sub label     { $_[0]{label} // $_[0]{name} }

# Log lines that say something went wrong (alert, crit, a crash), and
# other remarks, gathered over every start and stop.
sub problems  { @{ $_[0]{problems} } }
sub notes     { @{ $_[0]{notes} } }

# Why this target cannot run here (a module not compiled in), or undef.
sub unavailable { undef }

# endpoint('tcp' | 'unix'): { tcp => [HOST, PORT] } or { unix => PATH },
# valid while started.
sub endpoint {
    my ($self, $transport) = @_;
    return $transport eq 'unix'
        ? { unix => $self->{unix} }
        : { tcp => [ '127.0.0.1', $self->{port} ] };
}

# [pid, starttime] of every process whose CPU time counts as the proxy's:
# by default the one process spawn_one started, if any.
sub cpu_pids {
    my ($self) = @_;
    return $self->{pid} ? ([ $self->{pid}, $self->{pid_start} ]) : ();
}

# pids whose RSS counts in the idle-connection measurement.
sub rss_pids { $_[0]{pid} ? ($_[0]{pid}) : () }

# For a kind that is one process: start CMD with its output in LOG, known
# by pid and start time (guarded: killed even if the bench is), and wait
# until it serves.
sub spawn_one {
    my ($self, $cmd, $log) = @_;
    my $pid = $self->{pid} = spawn(cmd => $cmd, log => $log);
    $self->{pid_start} = proc_starttime($pid) // 0;
    guard("pid $pid $self->{pid_start}");
    $self->wait_ready(alive => sub { pid_alive($pid) },
                      why => sub { "--- $log:\n" . tail_file($log, 10) });
    return $pid;
}

# Its stop: SIGTERM, then SIGKILL to its group if it lingers (a problem
# named after WHAT).  0 if it was not running.
sub stop_one {
    my ($self, $what) = @_;
    my $pid = delete $self->{pid} or return 0;
    kill 'TERM', $pid;
    if (!wait_exit($pid, 10)) {
        push @{ $self->{problems} }, "$what did not exit on SIGTERM";
        kill 'KILL', -$pid;
        wait_exit($pid, 5);
    }
    Sluice::Sandbox::exit_status($pid);
    kill 'KILL', -$pid;
    unguard("pid $pid");
    return 1;
}

# How many idle client sessions this target can hold within the open
# files limit (the bench holds the sessions it opens to at most this).
sub idle_capacity { 0 }

# A DBI handle through the endpoint of $transport, or undef.
sub dbh {
    my ($self, $transport, %attr) = @_;
    my $ep = $self->endpoint($transport);
    my $c = $self->{ctx};
    my $dsn = 'DBI:MariaDB:' . ($ep->{unix}
        ? "mariadb_socket=$ep->{unix}"
        : "host=$ep->{tcp}[0];port=$ep->{tcp}[1]") . ";database=$c->{db}";
    return DBI->connect($dsn, $c->{user}, $c->{password},
        { RaiseError => 0, PrintError => 0, AutoCommit => 1,
          mariadb_connect_timeout => 3, %attr });
}

# Wait until a client logs in and runs a query over every transport while
# $alive->() stays true.  Dies with $why->() (the logs) otherwise.
sub wait_ready {
    my ($self, %o) = @_;
    my $err = '';
    my $ok = poll_until($o{timeout} // 15, sub {
        die "$self->{name} exited during startup\n" . $o{why}->()
            unless $o{alive}->();
        for my $tr ($self->transports) {
            my $dbh = $self->dbh($tr);
            my $v = $dbh && $dbh->selectrow_array('SELECT 1');
            $err = "$tr: " . ($DBI::errstr // 'no result');
            $dbh->disconnect if $dbh;
            return 0 unless $v;
        }
        return 1;
    });
    die "$self->{name} not ready: $err\n" . $o{why}->() unless $ok;
}

# The lines of FILE from byte OFFSET that match $re.
sub log_lines_since {
    my ($file, $offset, $re) = @_;
    open(my $fh, '<', $file) or return ();
    seek($fh, $offset // 0, 0);
    return grep { $_ =~ $re } map { chomp; $_ } <$fh>;
}

# For a proxy's start(): its own directory under the work dir, a free TCP
# port and the path of its unix socket (removed if left over), in
# $self->{dir}, {port} and {unix}.  Returns the directory.
sub prepare_dir {
    my ($self, $sock) = @_;
    my $d = $self->{dir} = "$self->{ctx}{workdir}/$self->{name}";
    make_path($d);
    $self->{port} = free_port();
    $self->{unix} = check_sun_path("$d/$sock");
    unlink $self->{unix};
    return $d;
}

# Unix socket paths hold 107 bytes.
sub check_sun_path {
    my ($path) = @_;
    die "socket path $path is too long (107 bytes at most): "
        . "set TMPDIR to a shorter directory\n" if length($path) > 107;
    return $path;
}

1;
