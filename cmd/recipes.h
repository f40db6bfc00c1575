/* recipes: the files of the recipes of examples/, embedded at build time (cmd/recipes.sh). */
#ifndef NS_RECIPES_H
#define NS_RECIPES_H

#include <stddef.h>

struct recipefile {
	const char *recipe; /* examples/<recipe>/ */
	const char *path;   /* where init writes it, relative to the repository */
	const char *data;
	size_t len;
};

extern const struct recipefile recipefiles[];
extern const size_t nrecipefiles;

#endif
