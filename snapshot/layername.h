/* layername: the one place a chain's layer names are made and read. A chain (snapshots/, or
 * snapshots/<workspace>/ when a run has several workspaces) holds NNNN.tar.zst, the workspace
 * before step N, its number written with at least four digits (0001, 9999, 10000);
 * NNNN.end.tar.zst, carried from the run a resumed run resumed, its workspace after its last
 * step N; and end.tar.zst, the workspace after the run's last step. */
#ifndef NS_LAYERNAME_H
#define NS_LAYERNAME_H

enum layerkind { LAYER_NONE, LAYER_STEP, LAYER_OLDEND, LAYER_END };

#define LAYERSTEPMAX 999999999 /* nine digits: every step an int holds that a run can reach */
#define LAYERBASE 16           /* room for a base name and its NUL */

/* What a file name of a chain is, its step in *step (may be NULL; 0 for end.tar.zst).
 * LAYER_NONE for anything else, a number not written as layerbase writes it (00001, +1, 0000)
 * included, so that no two names are one step. */
enum layerkind layerparse(const char *name, int *step);
/* The base name of a layer (what snaptake takes): "0007", "10000", or "end" for step 0. */
void layerbase(char buf[LAYERBASE], int step);
/* The file name of a layer of kind k (LAYER_STEP, LAYER_OLDEND, LAYER_END) and step; owned. */
char *layerfile(enum layerkind k, int step);
/* The layer's path in a run directory: snapshots/NAME, or snapshots/WS/NAME when ws is a
 * workspace's folder (NULL or "": the one chain); owned. */
char *layerpath(const char *ws, enum layerkind k, int step);
/* qsort order of file names of a chain: steps by number, a carried NNNN.end.tar.zst right after
 * step NNNN, end.tar.zst last, anything else after it. */
int layercmp(const void *a, const void *b);

#endif
