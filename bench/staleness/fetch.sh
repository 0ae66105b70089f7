#!/bin/sh
# Clones the benchmark's public histories as bare mirrors into $GIT_MEM_BENCH_MIRRORS
# (default ~/.cache/git-mem-bench), one folder <owner>+<name> each; an existing one is fetched.
# Then: GIT_MEM_BENCH_MIRRORS=<that folder> npm run bench:staleness [-- --quick]
set -eu
dir=${GIT_MEM_BENCH_MIRRORS:-$HOME/.cache/git-mem-bench}
mkdir -p "$dir"
# owner/name and the commit the benchmark pins (bench/staleness/repos.mjs)
while read -r name head; do
  into="$dir/$(echo "$name" | tr / +)"
  if [ -d "$into" ]; then
    git --git-dir="$into" fetch -q origin "+refs/heads/*:refs/heads/*"
  else
    git clone -q --bare "https://github.com/$name.git" "$into"
  fi
  git --git-dir="$into" cat-file -e "$head^{commit}" || { echo "$name: commit $head missing" >&2; exit 1; }
  echo "$name $head"
done <<'LIST'
psf/requests 1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e
golang/oauth2 89ff2e1ac388c1a234a687cb2735341cde3f7122
spring-projects/spring-petclinic edf4db28affcc4741c79850a3d95bc3f177b5ff9
nextauthjs/next-auth a1a16a5a7780488c7449feece410033f445d0b31
rubygems/rubygems.org 3c8ea0d4cbe85bd2a2bb5d22486247656a3dfb6c
laravel/laravel 8a119d7f4461c73b47197b80f4cecb3c97796919
LIST
echo "mirrors in $dir"
