// The public histories of the benchmark, pinned: the first-parent history of `head` is what is
// sampled (fetch.sh clones them; a newer clone still holds these commits).
export const REPOS = [
  { name: 'psf/requests', lang: 'Python', ext: /\.py$/, head: '1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e' },
  { name: 'golang/oauth2', lang: 'Go', ext: /\.go$/, head: '89ff2e1ac388c1a234a687cb2735341cde3f7122' },
  { name: 'spring-projects/spring-petclinic', lang: 'Java', ext: /\.java$/, head: 'edf4db28affcc4741c79850a3d95bc3f177b5ff9' },
  { name: 'nextauthjs/next-auth', lang: 'TypeScript', ext: /\.(ts|tsx)$/, head: 'a1a16a5a7780488c7449feece410033f445d0b31' },
  { name: 'rubygems/rubygems.org', lang: 'Ruby', ext: /\.(rb|rake)$/, head: '3c8ea0d4cbe85bd2a2bb5d22486247656a3dfb6c' },
  { name: 'laravel/laravel', lang: 'PHP', ext: /\.php$/, head: '8a119d7f4461c73b47197b80f4cecb3c97796919' },
];
