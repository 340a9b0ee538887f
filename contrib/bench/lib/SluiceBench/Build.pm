package SluiceBench::Build;

# A release build of sluice for the bench, whatever objs/ holds (the
# developer's objs/ is usually a --with-sanitizers --with-debug build,
# which would measure the sanitizers).  The working tree (tracked files
# and new ones not ignored, as `git ls-files` lists them, uncommitted
# changes included) is mirrored into a build directory and built there
# with ./configure && make.  The mirror only rewrites files whose content
# changed and removes files that left the tree, so make rebuilds only what
# changed and never compiles a stale source file.

use strict;
use warnings;

use Exporter qw(import);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Find qw(find);
use File::Path qw(make_path);

use Sluice::Sandbox qw(slurp);
use SluiceBench::Util qw(run_capture note);

our @EXPORT_OK = qw(build_sluice check_release build_idleconn
                    build_nullserver
                    sluice_describe);

# Top-level directories the build does not read: tests, docs, the
# sandbox of contrib/quickstart.sh (a live datadir), generated files.
my $NOT_BUILT = qr{^(?:t|docs|contrib|sandbox|objs|\.git)(?:/|\z)};

# Files of the working tree that the build may read, relative to $top.
sub _tree_files {
    my ($top) = @_;
    my @f;
    if (-e "$top/.git") {          # a directory, or a worktree's file
        my ($rc, $out) = run_capture(
            cmd => [ 'git', '-C', $top, 'ls-files', '-z', '--cached',
                     '--others', '--exclude-standard' ], timeout => 60);
        @f = split /\0/, $out if $rc == 0;
    }
    if (!@f) {
        find({ no_chdir => 1, wanted => sub {
            my $rel = substr($File::Find::name, length($top) + 1);
            if (-d $_ && $rel =~ $NOT_BUILT) {
                $File::Find::prune = 1;
                return;
            }
            push @f, $rel if -f $_ && $rel !~ /\.[od]\z/;
        } }, $top);
    }
    # a tracked file deleted in the work tree is still listed
    return grep { $_ !~ $NOT_BUILT && -f "$top/$_" && !-l "$top/$_" } @f;
}

# Mirror the tree into $dir; returns the files that changed.
sub _mirror {
    my ($top, $dir) = @_;
    my @files = _tree_files($top);
    my %now = map { $_ => 1 } @files;
    my $manifest = "$dir/.bench-manifest";
    for my $old (split /\n/, slurp($manifest) // '') {
        unlink "$dir/$old" unless $now{$old};
    }
    my @changed;
    for my $f (@files) {
        my ($src, $dst) = ("$top/$f", "$dir/$f");
        my $same = -f $dst && -s $dst == -s $src
            && (slurp($dst) // '') eq (slurp($src) // '');
        next if $same;
        make_path(dirname($dst));
        unlink $dst;
        copy($src, $dst) or die "copy $src to $dst: $!\n";
        chmod((stat $src)[2] & 07777, $dst);
        push @changed, $f;
    }
    open(my $fh, '>', $manifest) or die "$manifest: $!\n";
    print $fh map { "$_\n" } @files;
    close $fh or die "$manifest: $!\n";
    return @changed;
}

# build_sluice(top => TOP, dir => DIR, configure => [ARGS], nproc => N):
# the path of a release objs/sluice built from the working tree.
sub build_sluice {
    my (%o) = @_;
    my ($top, $dir) = @o{qw(top dir)};
    make_path($dir);
    my @changed = _mirror($top, $dir);
    my $args = join ' ', @{ $o{configure} };
    my $stamp = "$dir/.bench-configure";
    my $reconf = !-f "$dir/Makefile"
        || (slurp($stamp) // "\0") ne $args
        || grep { m{^(?:configure|Makefile\.in|modules/[^/]+/config)\z} }
           @changed;
    my $log = "$dir/build.log";
    unlink $log;
    if ($reconf) {
        note('configuring a release build in %s', $dir);
        my ($rc, $out) = run_capture(
            cmd => [ 'sh', './configure', @{ $o{configure} } ],
            dir => $dir, log => $log, timeout => 300);
        die "./configure failed in $dir ($rc):\n" . _tail($out) if $rc;
        open(my $fh, '>', $stamp) or die "$stamp: $!\n";
        print $fh $args;
        close $fh;
    }
    note('building sluice (%d files changed)', scalar @changed);
    my ($rc, $out) = run_capture(
        cmd => [ 'make', '-j' . ($o{nproc} // 1), 'objs/sluice' ],
        dir => $dir, log => $log, append => 1, timeout => 900);
    die "make failed in $dir ($rc):\n" . _tail($out) if $rc;
    return "$dir/objs/sluice";
}

sub _tail {
    my ($text) = @_;
    my @l = split /\n/, $text;
    splice @l, 0, @l - 25 if @l > 25;
    return join '', map { "    $_\n" } @l;
}

# sluice -V as { version, configure, modules => [...], text }.
sub sluice_describe {
    my ($bin) = @_;
    my ($rc, $out) = run_capture(cmd => [ $bin, '-V' ], timeout => 30);
    die "$bin -V failed ($rc):\n$out" if $rc;
    my ($v) = $out =~ /version\s+(\S+)/;
    my ($c) = $out =~ /^configure arguments:[ \t]*(.*)$/m;
    my ($m) = $out =~ /^modules:[ \t]*(.*)$/m;
    return { version => $v // '?', configure => $c // '',
             modules => [ split ' ', $m // '' ], text => $out };
}

# Dies unless $bin is a release build: a sanitizer or debug build says
# nothing about the speed of sluice.
sub check_release {
    my ($bin) = @_;
    my $d = sluice_describe($bin);
    die "$bin is built with $1: the bench measures release builds only "
        . "(drop --sluice to let the bench build its own)\n"
        if $d->{configure} =~ /(--with-(?:sanitizers|debug))/;
    die "$bin is built with -fsanitize or -O0 options ($d->{configure})\n"
        if $d->{configure} =~ /-fsanitize|-O0/;
    return $d;
}

# The idle-connection client, built against MariaDB Connector/C.
sub build_idleconn {
    my (%o) = @_;
    my $out = "$o{dir}/idleconn";
    my $src = "$o{top}/contrib/bench/idleconn.c";
    return $out if -x $out && -M $out < -M $src;
    make_path($o{dir});     # --sluice builds no sluice there first
    my ($rc1, $cflags) = run_capture(cmd => [ 'mariadb_config', '--cflags' ]);
    my ($rc2, $libs) = run_capture(cmd => [ 'mariadb_config', '--libs' ]);
    die "mariadb_config failed: install Debian's libmariadb-dev\n"
        if $rc1 || $rc2;
    my ($rc, $msg) = run_capture(
        cmd => [ 'cc', '-std=c99', '-D_GNU_SOURCE', '-O2', '-Wall', '-Wextra',
                 '-o', $out, $src, split(' ', $cflags), split(' ', $libs) ],
        timeout => 120);
    die "building idleconn failed:\n$msg" if $rc;
    return $out;
}

# The reference server of the cache targets (Target/Null.pm).
sub build_nullserver {
    my (%o) = @_;
    my $out = "$o{dir}/nullserver";
    my $src = "$o{top}/contrib/bench/nullserver.c";
    return $out if -x $out && -M $out < -M $src;
    make_path($o{dir});
    my ($rc, $msg) = run_capture(
        cmd => [ 'cc', '-std=c99', '-D_GNU_SOURCE', '-O2', '-Wall', '-Wextra',
                 '-pthread', '-o', $out, $src ],
        timeout => 120);
    die "building nullserver failed:\n$msg" if $rc;
    return $out;
}

1;
