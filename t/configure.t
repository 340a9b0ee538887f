#!/usr/bin/perl

# ./configure, in a copy of the source tree: --help lists the module
# switches, an unknown option or module fails and says so, and
# `--without-readconn` builds a binary whose -V lists no readconn and
# whose -t refuses readconn's directive and router, naming the module and
# file:line.  The tree's own objs/ and Makefile are never touched.  Needs
# no MariaDB.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Find qw(find);
use File::Path qw(make_path);
use File::Spec;
use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(spawn wait_exit slurp);

use constant BUILD_TIMEOUT => 300;

# a program in PATH, or undef
sub in_path {
    my ($name) = @_;
    my ($p) = grep { -x "$_/$name" && !-d _ } File::Spec->path;
    return $p ? "$p/$name" : undef;
}

plan skip_all => 'no C compiler: cc is not in PATH' unless in_path('cc');
plan skip_all => 'make is not in PATH' unless in_path('make');

my $t = Sluice::Test->new;
my $dir = $t->testdir;
my $top = $Sluice::Test::TOP;
my $tree = "$dir/tree";

# What configure and make read, as they are in the working tree (edits
# not committed yet included); not objs/, not Makefile.
my @files = ('configure', 'Makefile.in');
find({ no_chdir => 1, wanted => sub {
    push @files, File::Spec->abs2rel($_, $top) if -f $_;
} }, map { "$top/$_" } qw(src modules));
for my $f (@files) {
    make_path(dirname("$tree/$f"));
    copy("$top/$f", "$tree/$f") or die "copy $f: $!\n";
    chmod((stat "$top/$f")[2] & 07777, "$tree/$f");
}

# Run @cmd in the copy: (exit code, stdout, stderr); -1 on a timeout.
my $ncmd = 0;
sub in_tree {
    my (@cmd) = @_;
    my $base = "$dir/tree-cmd-" . ++$ncmd;
    my $pid = spawn(cmd => \@cmd, chdir => $tree, same_session => 1,
                    stdout => "$base.out", stderr => "$base.err");
    my $rc = -1;
    if (wait_exit($pid, BUILD_TIMEOUT)) {
        my $st = Sluice::Sandbox::exit_status($pid);
        $rc = $st & 127 ? 128 + ($st & 127) : $st >> 8;
    } else {
        kill 'KILL', $pid;
    }
    return ($rc, map { slurp("$base.$_") // '' } qw(out err));
}

$t->plan(21);

# --- options -------------------------------------------------------------

my ($rc, $out, $err) = in_tree('./configure', '--help');
is($rc, 0, '--help exits 0');
like($out, qr/^\s+--with-readconn\s+--without-readconn\b/m,
     '--help lists --with-readconn and --without-readconn');

($rc, $out, $err) = in_tree('./configure', '--frobnicate');
is($rc, 1, 'an unknown option fails');
like($err, qr/^configure: error: invalid option "--frobnicate"$/m,
     'and says which');

($rc, $out, $err) = in_tree('./configure', '--without-nosuchmodule');
is($rc, 1, 'an unknown module fails');
like($err, qr/^configure: error: unknown module "nosuchmodule"/m,
     'and says which');
ok(!-e "$tree/Makefile", 'a failed configure writes no Makefile');

($rc, $out, $err) = in_tree('./configure', '--without-cache',
                            '--with-cache-redis');
is($rc, 1, 'a module without the module it stands on fails');
like($err, qr/^configure: error: module "cache_redis" needs module "cache"/m,
     'and says which (--with-cache-redis is --with-cache_redis)');

# --- a build without readconn --------------------------------------------

($rc, $out, $err) = in_tree('./configure', '--without-readconn',
                            '--without-readwritesplit', '--without-cache',
                            '--without-status', '--without-admin',
                            '--with-cc-opt=-O0');
is($rc, 0, './configure --without-readconn --without-readwritesplit '
   . '--without-cache --without-status --without-admin exits 0')
    or diag($out, $err);
like($out, qr/^modules:[ \t]*$/m, 'and lists no module');
($rc, $out, $err) = in_tree('make', '-j2');
is($rc, 0, 'make builds it') or diag($err);
my $bin = "$tree/objs/sluice";
ok(-x $bin, 'objs/sluice is there');

{
    local $ENV{SLUICE_BINARY} = $bin;
    my @m = $t->modules;
    my $v = qx{"$bin" -V 2>&1};
    like($v, qr/^configure[ ]arguments:[ ]--without-readconn[ ]
                --without-readwritesplit[ ]--without-cache[ ]
                --without-status[ ]--without-admin[ ]
                --with-cc-opt=-O0$/mx,
         '-V prints the configure arguments');
    ok($v =~ /^modules:(.*)$/m && $1 !~ /readconn/,
       '-V: readconn is not among the modules') or diag($v);
}

# Each config is valid for a binary with readconn (the control below);
# in the role one, readconn_role comes first, so it is what fails.
my %conf = (
    role => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        readconn_role primary; #<
        router readconn;
        upstream cluster;
    }
}
EOF
    router => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn; #<
        upstream cluster;
    }
}
EOF
);
my %msg = (
    role   => '"readconn_role" directive belongs to module "readconn", '
            . 'which was not compiled in (./configure --with-readconn)',
    router => 'router "readconn" was not compiled in '
            . '(./configure --with-readconn)',
);
for my $k (sort keys %conf) {
    $t->write_file_expand("$k.conf", $conf{$k});
    my @l = split /\n/, $conf{$k};
    my ($line) = map { $_ + 1 } grep { $l[$_] =~ /#<$/ } 0 .. $#l;
    local $ENV{SLUICE_BINARY} = $bin;
    my ($rc, $out) = $t->test_config(conf => "$k.conf");
    is($rc, 1, "$k: sluice -t fails");
    like($out, qr/^sluice: \[emerg\] \Q$dir\/$k.conf:$line: $msg{$k}\E$/m,
         "$k: names the module, with file:line") or diag($out);
}

SKIP: {
    skip 'the tree\'s own binary has no readconn', 2
        unless $t->has_module('readconn');
    for my $k (sort keys %conf) {
        my ($rc, $out) = $t->test_config(conf => "$k.conf");
        is($rc, 0, "$k: the same config passes with the tree's own binary")
            or diag($out);
    }
}
